// loopwarden-sim: a local simulator of the Baseten and Fireworks APIs.
#include "sim/sim_cli.h"

int main(int argc, char** argv) { return loopwarden::sim::SimMain(argc, argv); }
