// Entry point for Bun. Bun implements the node: APIs the runtime uses (fs/promises, process, fetch,
// TextDecoder), so the composition is the same; this file exists so Bun-specific adapters (bun:sqlite
// for memory, in a later capability) are picked here and nowhere else.
import { runProcess } from './node-env.ts';

void runProcess();
