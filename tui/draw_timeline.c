/* tui/draw_timeline.c - to be written (issue 14). */
