/* tui/draw_details.c - to be written (issue 14). */
