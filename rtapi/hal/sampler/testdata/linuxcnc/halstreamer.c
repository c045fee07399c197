/* Reads halstreamer input for the cfg string argv[1] from stdin and
 * prints, for each line, halstreamer's message or the sample's words in
 * hex (as gortapi's ParseStreamLine returns them). The line loop and
 * field parsing are streamer_usr.c's, extracted by gen.sh into
 * build/parse.body. */
#include "harness.h"

#define BUF_SIZE 4000

int main(int argc, char **argv)
{
	int n, line = 0, num_pins = strlen(argv[1]);
	char *cp, *cp2;
	char buf[BUF_SIZE];
	const char *errmsg;
	for (n = 0; n < num_pins; n++)
		types[n] = parse_type(argv[1][n]);
	while (fgets(buf, BUF_SIZE, stdin)) {
		if (buf[0] == '#') {
			line++;
			continue;
		}
		cp = buf;
		errmsg = NULL;
		union hal_stream_data data[num_pins];
		memset(data, 0, sizeof data);
#include "build/parse.body"
		if (errmsg != NULL) {
			printf("line %d, field %d: %s, skipping the line\n", line, n, errmsg);
		} else {
			printf("line %d:", line);
			for (n = 0; n < num_pins; n++) {
				uint64_t w = 0;
				switch (types[n]) {
				case HAL_FLOAT: memcpy(&w, &data[n].f, 8); break;
				case HAL_BIT: w = data[n].b; break;
				case HAL_S32: w = (uint64_t)(int64_t)data[n].s; break;
				case HAL_U32: w = data[n].u; break;
				case HAL_S64: w = (uint64_t)data[n].l; break;
				case HAL_U64: w = data[n].k; break;
				}
				printf(" %016llx", (unsigned long long)w);
			}
			printf("\n");
		}
		line++;
	}
	return 0;
out:
	return 1;
}
