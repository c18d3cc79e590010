#!/usr/bin/env node
// Copies the dashboard's hand-written assets (CSS) next to the compiled server, so that the
// package ships them under dist/src and `quiesce serve` reads them from there.
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const from = join(root, "src", "server", "dashboard", "assets");
const to = join(root, "dist", "src", "server", "dashboard", "assets");
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true });
