// The builtin tools, bound to manifest Tools by name (docs/tools.md).
import { echo } from './echo.ts';
import { shell } from './shell.ts';
import { fileRead } from './file-read.ts';
import { fileWrite } from './file-write.ts';
import { httpFetch } from './http-fetch.ts';
import { mqttPublish } from './mqtt-publish.ts';
import { mqttRead } from './mqtt-read.ts';
import { a2aSend } from './a2a-send.ts';
import type { BuiltinDef } from './def.ts';

export const BUILTINS: Record<string, BuiltinDef> = {
  echo,
  shell,
  'file-read': fileRead,
  'file-write': fileWrite,
  'http-fetch': httpFetch,
  'mqtt-publish': mqttPublish,
  'mqtt-read': mqttRead,
  'a2a-send': a2aSend,
};
