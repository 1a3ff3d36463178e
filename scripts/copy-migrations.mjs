// tsc compiles only TypeScript: the SQL migrations are copied beside the compiled code.
import { cpSync } from 'node:fs';
cpSync('src/migrations', 'dist/migrations', { recursive: true });
