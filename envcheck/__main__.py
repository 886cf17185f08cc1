"""The console script (`envcheck`) and `python -m envcheck`. The CLI's modules are imported here,
inside the function, so a Ctrl-C while they load is one line and exit 130, never a traceback."""
import sys


def main() -> None:
    try:
        from envcheck.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("envcheck: interrupted\n")
        sys.exit(130)
    cli_main()


if __name__ == "__main__":
    main()
