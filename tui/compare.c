/* tui/compare.c - to be written (issue 14). */
