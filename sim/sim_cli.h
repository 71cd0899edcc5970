#pragma once
// The loopwarden-sim command line (kept in the library so tests run the same code).

namespace loopwarden::sim {

// Parses flags, loads or generates the world, serves until SIGTERM/SIGINT.
// Returns the process exit code: 0 after a clean stop, 2 on bad usage, 78 on a bad
// scenario, 1 when the listener cannot start.
int SimMain(int argc, const char* const* argv);

}  // namespace loopwarden::sim
