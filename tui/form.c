/* tui/form.c - to be written (issue 14). */
