// Preloaded (node --import) into every process the benchmark starts: when the benchmark dies
// without stopping it (SIGKILL, a crash), the stdin pipe it holds closes and this process stops
// itself through its own SIGTERM handler, so no server is left running behind a benchmark.
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
