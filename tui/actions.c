/* tui/actions.c - to be written (issue 14). */
