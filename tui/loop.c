/* tui/loop.c - to be written (issue 14). */
