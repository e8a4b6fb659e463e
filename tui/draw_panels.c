/* tui/draw_panels.c - to be written (issue 14). */
