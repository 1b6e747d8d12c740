"""Support code for the tests: op-checking helpers, the strict CuPy stand-in and its
devices, and the host doubles of the CUDA kernels. Nothing here is collected as a test."""
