/* tui/draw.c - to be written (issue 14). */
