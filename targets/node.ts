// Entry point for Node >= 18: `dist/claw.mjs`.
import { runProcess } from './node-env.ts';

void runProcess();
