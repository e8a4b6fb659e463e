/* draw_plan.c: placeholder of issue 15's contract; its owner replaces it. */
typedef int pw_placeholder_draw_plan_t;
