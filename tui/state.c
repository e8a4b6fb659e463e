/* tui/state.c - to be written (issue 14). */
