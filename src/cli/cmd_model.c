/* cmd_model.c: placeholder of issue 15's contract; its owner replaces it. */
typedef int pw_placeholder_cmd_model_t;
