/* plot.c — figures through gnuplot; see plot.h. */
#include "io/plot.h"

#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *hdp_plot_gnuplot(void)
{
    static __thread char found[4096];
    const char *env = getenv("HDPSGD_GNUPLOT");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(found, sizeof found, "%.*s/gnuplot", (int)len, len ? p : ".");
        if (access(found, X_OK) == 0)
            return found;
        p += len + (colon ? 1 : 0);
    }
    return NULL;
}

void hdp_plot_assign(char *buf, size_t size, const char *var, const char *value)
{
    /* a gnuplot double-quoted string: escape \\ and \", newline as \\n */
    size_t used = strlen(buf);
    used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s=\"", var);
    for (const char *c = value; *c && used + 4 < size; c++) {
        if (*c == '\n') {
            buf[used++] = '\\';
            buf[used++] = 'n';
            continue;
        }
        if (*c == '"' || *c == '\\') buf[used++] = '\\';
        buf[used++] = *c;
    }
    if (used + 3 < size) {
        buf[used++] = '"';
        buf[used++] = '\n';
        buf[used] = '\0';
    }
}

static const char *terminal_for(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".pdf"))
        return "set terminal pdfcairo enhanced color font 'Sans,9' size 7in,5.3in";
    if (dot && !strcasecmp(dot, ".svg"))
        return "set terminal svg enhanced font 'Sans,12' size 1000,760 background '#ffffff'";
    return "set terminal pngcairo enhanced font 'Sans,11' size 1000,760";
}

hdp_status hdp_plot_draw(const char *name, const char *out_path, const char *assignments,
                         hdp_error *err)
{
    const char *script = hdp_plot_script(name);
    if (!script)
        return hdp_fail(err, HDP_EINPUT, "no plot script named '%s'", name);
    const char *gp = hdp_plot_gnuplot();
    if (!gp)
        return hdp_fail(err, HDP_EIO,
                        "gnuplot not found (install it: apt-get install gnuplot-nox, or set "
                        "HDPSGD_GNUPLOT); the figure %s was not drawn",
                        out_path);
    /* the figure goes where the output layer puts files (symbolic links written through,
     * the replaced file's mode kept, the temporary file removed on a signal): gnuplot
     * writes the temporary file (or a device directly), hdp_out_commit renames it */
    hdp_outfile out;
    hdp_status ost = hdp_out_open(&out, out_path, err);
    if (ost != HDP_OK)
        return ost;
    if (out.is_stdout) {
        hdp_out_abort(&out);
        return hdp_fail(err, HDP_EINPUT, "a figure cannot be written to standard output");
    }
    const char *tmp_out = out.direct ? out.target : out.tmp;
    char tmp_script[64], tmp_err[64];
    snprintf(tmp_script, sizeof tmp_script, "/tmp/hdpsgd-plot-XXXXXX");
    int fd = mkstemp(tmp_script);
    snprintf(tmp_err, sizeof tmp_err, "/tmp/hdpsgd-plot-err-XXXXXX");
    int efd = mkstemp(tmp_err);
    hdp_status st = HDP_OK;
    struct stat sb;
    if (fd < 0 || efd < 0) {
        st = hdp_fail(err, HDP_EIO, "cannot create a temporary file for gnuplot: %s",
                      strerror(errno));
        goto done;
    }
    FILE *f = fdopen(fd, "w");
    fd = -1;
    fprintf(f, "%s\n", terminal_for(out_path));
    fputs("set output '", f);
    for (const char *c = tmp_out; *c; c++) {
        if (*c == '\'') fputc('\'', f);
        fputc(*c, f);
    }
    fputs("'\n", f);
    fputs(assignments ? assignments : "", f);
    fputs("\n", f);
    fputs(script, f);
    fputs("\nset output\n", f);
    if (fclose(f) != 0) {
        st = hdp_fail(err, HDP_EIO, "cannot write the gnuplot script: %s", strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, efd, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)"gnuplot", tmp_script, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, gp, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    if (rc == 0)
        waitpid(pid, &status, 0);
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(tmp_out, &sb) != 0 ||
        (!out.direct && sb.st_size == 0)) {
        char msg[600] = "";
        lseek(efd, 0, SEEK_SET);
        ssize_t got = read(efd, msg, sizeof msg - 1);
        msg[got > 0 ? got : 0] = '\0';
        st = hdp_fail(err, HDP_EIO, "gnuplot failed drawing %s: %s", out_path,
                      msg[0] ? msg : (rc ? strerror(rc) : "no output"));
        goto done;
    }
    st = hdp_out_commit(&out, err);
done:
    if (fd >= 0) close(fd);
    if (efd >= 0) close(efd);
    unlink(tmp_script);
    unlink(tmp_err);
    hdp_out_abort(&out); /* nothing left to do after a commit */
    return st;
}
