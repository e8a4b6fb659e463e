/* tests/test_tui_draw.c - to be written (issue 14). */
#include "tap.h"
int main(void) { return tap_done(); }
