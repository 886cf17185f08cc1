"""The command class every envcheck command uses: plain help that reads at 80 columns (two
columns, at most 100 wide, the shared host/SSH options under their own heading, metavars that say
what to type), and old option names still accepted with a note, so scripts keep working."""
from typing import Any, Dict, List, Optional

import typer
from typer.core import TyperCommand


class HelpCommand(TyperCommand):
    # old spelling -> current one, per command (see EnvcheckApp.command)
    renamed: Dict[str, str] = {}

    def parse_args(self, ctx: Any, args: List[str]) -> List[str]:
        out: List[str] = []
        for i, a in enumerate(args):
            if a == "--":     # the rest belongs to a script (launch) or is a value
                out.extend(args[i:])
                break
            out.append(self._current(a))
        return super().parse_args(ctx, out)

    def _current(self, arg: str) -> str:
        old, eq, value = arg.partition("=")
        new = self.renamed.get(old)
        if new is None:
            return arg
        typer.echo(f"envcheck: {old} is the older name of {new} in `envcheck {self.name}` (it means "
                   f"something else in other commands); it still works (fix: write {new})", err=True)
        return new + eq + value

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args, groups = [], {}   # type: ignore[var-annotated]
        for param in self.get_params(ctx):
            rv = param.get_help_record(ctx)
            if rv is None:
                continue
            if param.param_type_name == "argument":
                # the metavar alone (typer adds its type: `HOSTS <list[str]>`)
                name = param.metavar or param.name.upper()
                many = param.nargs != 1 and not name.endswith("...")
                args.append((name + ("..." if many else ""), getattr(param, "help", None) or rv[1]))
            else:
                groups.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(rv)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        for name in ["Options"] + sorted(g for g in groups if g != "Options"):
            if name in groups:
                with formatter.section(name):
                    formatter.write_dl(groups[name])


class EnvcheckApp(typer.Typer):
    """typer.Typer whose commands are HelpCommands; `renamed={"--timeout": "--collective-timeout"}`
    keeps an old option name working in that command."""

    def command(self, name: Optional[str] = None, *, cls: Any = None,
                renamed: Optional[Dict[str, str]] = None, **kw: Any) -> Any:
        base = cls or HelpCommand
        if renamed:
            base = type(base.__name__, (base,), {"renamed": dict(renamed)})
        return super().command(name, cls=base, **kw)
