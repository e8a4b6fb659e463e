/* tui/prompt.c - to be written (issue 14). */
