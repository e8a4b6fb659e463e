/* tui/recover.c - to be written (issue 14). */
