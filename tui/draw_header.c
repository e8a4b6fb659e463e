/* tui/draw_header.c - to be written (issue 14). */
