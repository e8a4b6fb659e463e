/* tui/solve.c - to be written (issue 14). */
