#!/bin/sh
# test_mpi.sh: placeholder of the contract of issue 16.
echo "1..0 # SKIP not built yet"
