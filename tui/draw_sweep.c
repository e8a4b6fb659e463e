/* tui/draw_sweep.c - to be written (issue 14). */
