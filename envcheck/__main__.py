"""The console script (`envcheck`) and `python -m envcheck`. The CLI's modules are imported here,
inside the function, so a Ctrl-C while they load is one line and exit 130, never a traceback."""
import sys

import envcheck


def main() -> None:
    # the command's own module is imported when the command line names it, not every command's
    # (envcheck/cli/__init__.py: COMMANDS)
    envcheck.CLI_ON_DEMAND = True
    try:
        # lazy: the CLI's modules cost ~300 ms CPU to load (typer, every command; -X importtime):
        # a Ctrl-C in them is caught here, one line and 130, instead of a traceback
        from envcheck.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("envcheck: interrupted\n")
        sys.exit(130)
    cli_main()


if __name__ == "__main__":
    main()
