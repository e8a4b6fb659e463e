/* src/cli/cmd_design.c - to be written (issue 14). */
