#ifndef COFFER_READLINE_SHIM_H
#define COFFER_READLINE_SHIM_H

// readline.h uses FILE without including stdio.h itself.
#include <stdio.h>
#include <readline/readline.h>
#include <readline/history.h>

// readline keeps its state in global variables, which Swift 6 would import as unsafe
// mutable globals. Coffer reaches them only through these accessors, from one thread
// at a time (the line editor's queue).

static inline char *_Nonnull coffer_rl_line_buffer(void) { return rl_line_buffer ? rl_line_buffer : (char *)""; }
static inline int coffer_rl_point(void) { return rl_point; }
static inline int coffer_rl_end(void) { return rl_end; }
static inline void coffer_rl_set_point(int point) { rl_point = point; }

static inline char **_Nullable coffer_rl_no_default_completion(const char *_Nonnull text, int start, int end) {
    (void)text; (void)start; (void)end;
    rl_attempted_completion_over = 1;
    return NULL;
}

/// Names the application for ~/.inputrc conditionals, leaves signals to Coffer, and
/// turns off readline's own file-name completion (it would list host files).
static inline void coffer_rl_configure(rl_command_func_t *_Nonnull complete) {
    rl_readline_name = "coffer";
    rl_catch_signals = 0;
    rl_catch_sigwinch = 1;
    rl_attempted_completion_function = coffer_rl_no_default_completion;
    rl_bind_key('\t', complete);
}

/// Replaces the text between `start` and `end` as one undoable change.
static inline void coffer_rl_replace_text(int start, int end, const char *_Nonnull text) {
    rl_begin_undo_group();
    rl_delete_text(start, end);
    rl_point = start;
    rl_insert_text(text);
    rl_end_undo_group();
}

/// Shows a list below the line (matches[0] is ignored), then redraws prompt and line.
static inline void coffer_rl_show_list(char *_Nullable *_Nonnull matches, int count, int width) {
    rl_filename_completion_desired = 0;
    rl_crlf();
    rl_display_match_list(matches, count, width);
    rl_forced_update_display();
}

/// Ends the line being edited: leaves the typed text visible with `mark` after it (^C),
/// forgets it, and moves to a new line.
static inline void coffer_rl_end_line(const char *_Nonnull mark) {
    FILE *out = rl_outstream ? rl_outstream : stdout;
    rl_point = rl_end;
    rl_redisplay();
    fputs(mark, out);
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_replace_line("", 0);
    rl_point = rl_end = rl_mark = 0;
    rl_crlf();
    fflush(out);
}

/// Ctrl-C at the prompt: end the line with ^C, then a fresh prompt on the new line.
static inline void coffer_rl_abandon_line(void) {
    coffer_rl_end_line("^C");
    rl_on_new_line();
    rl_redisplay();
}

#endif
