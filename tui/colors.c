/* tui/colors.c - to be written (issue 14). */
