/* planner.c: placeholder of issue 15's contract; its owner replaces it. */
typedef int pw_placeholder_planner_t;
