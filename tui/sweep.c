/* tui/sweep.c - to be written (issue 14). */
