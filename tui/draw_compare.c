/* tui/draw_compare.c - to be written (issue 14). */
