/*
 * cmd_config.c — `hdpsgd config`: the resolved model as a model file (which reads back to
 * the same model), and `hdpsgd keys`: the model keys with their defaults, or with the values
 * of a model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "cli.h"

static const char *config_out, *config_command;
static int config_all;

const cli_opt config_opts[] = {
    {"output", 'o', OPT_OUTPUT, &config_out, "FILE.ini", "write the model file here (default: stdout)"},
    {"command", 0, OPT_STRING, &config_command, "NAME",
     "also the sections command NAME uses ([rf] and [dpgd] for rf, [kl] for kl, ...)"},
    {"all", 0, OPT_FLAG, &config_all, NULL, "every section, the families' included"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

const char config_usage[] = "[MODEL.ini]";
const char config_help[] =
    "Prints the resolved model (the file, then the --set overrides, checked as every command\n"
    "checks them) as a model file: the core's sections ([data] ... [validate]), with\n"
    "--command NAME also the sections that command uses, with --all every section. The file\n"
    "reads back to the same model: `hdpsgd config M.ini > R.ini; hdpsgd config R.ini` prints\n"
    "the same text, and every command gives the same results on R.ini as on M.ini. data.n is\n"
    "carried by data.gamma (= d/n exactly); of the forms of the privacy budget only the one\n"
    "given is written (privacy.rho when none was); file names are written absolute.";

int cmd_config(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("config");
    cli_common common;
    config_out = config_command = NULL;
    config_all = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (config_command && config_all) {
        fprintf(stderr, "hdpsgd config: --command and --all exclude each other\n");
        return EXIT_BAD_INPUT;
    }
    if (config_command && !cli_find_command(config_command)) {
        fprintf(stderr, "hdpsgd config: --command %s: no such command (see hdpsgd --help)\n",
                config_command);
        return EXIT_BAD_INPUT;
    }
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outset out;
    hdp_outset_init(&out, &err);
    /* the text first: a line too long for the model reader (a long file name) would not read
     * back, so it is refused (exit 2) rather than written */
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (!mem) {
        hdp_model_free(&m);
        return cli_error(EXIT_NUMERIC, "config", "out of memory");
    }
    fprintf(mem, "; hdpsgd config: a resolved model (hdpsgd %s)\n", hdp_version_string());
    hdp_model_write_ini_sections(&m, mem, config_all ? NULL : cli_model_sections(config_command));
    hdp_model_free(&m);
    if (fclose(mem) != 0 || !text) {
        free(text);
        return cli_error(EXIT_NUMERIC, "config", "out of memory");
    }
    for (const char *line = text, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end)
            break;
        if (end - line > HDP_MODEL_MAX_LINE) {
            fprintf(stderr, "hdpsgd config: error: the line '%.*s' would have %ld characters, more "
                            "than a model file's line can (%d): it would not read back; use a "
                            "shorter file name (a symbolic link, say)\n",
                    (int)(end - line), line, (long)(end - line), HDP_MODEL_MAX_LINE);
            free(text);
            return EXIT_BAD_INPUT;
        }
    }
    FILE *f;
    if ((f = hdp_outset_add(&out, config_out ? config_out : "-")))
        fputs(text, f);
    free(text);
    hdp_status st = hdp_outset_commit(&out);
    return st == HDP_OK ? 0 : cli_fail("config", &err);
}

const cli_opt keys_opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
const char keys_usage[] = "[MODEL.ini]";
const char keys_help[] =
    "Prints every model key, section by section, as key = value and what it accepts: the\n"
    "built-in defaults, or with MODEL.ini or --set the values of that model, resolved as every\n"
    "command resolves them (data.n from data.gamma, every form of the privacy budget), with\n"
    "'*' after the keys the file or --set gave.";

int cmd_keys(int argc, char **argv)
{
    cli_common common;
    int rc = cli_start(cli_find_command("keys"), argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    hdp_model m;
    int values = common.model_path || common.nsets;
    if (values && (rc = cli_load_model(&common, &m)))
        return rc;
    const char *section, *key, *def, *help, *prev = "";
    char buf[HDP_PATH_MAX];
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, &def, &help); i++) {
        if (strcmp(prev, section))
            printf("%s[%s]\n", i ? "\n" : "", section);
        prev = section;
        const char *v = def;
        int given = 0;
        if (values) {
            hdp_model_value_text(&m, section, key, buf, sizeof buf);
            v = buf;
            given = hdp_model_key_given(&m, section, key);
        }
        printf("  %-18s = %-10s%s %s\n", key, v[0] ? v : "(none)", given ? " *" : "", help);
    }
    if (values)
        hdp_model_free(&m);
    return 0;
}
