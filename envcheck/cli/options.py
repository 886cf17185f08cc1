"""CLI options and arguments built from the declarations in envcheck/params: the parser checks
type, bounds, pattern and path kind while the command line is parsed, so a bad value is one
line and exit 2 before any work, in every command alike."""
import dataclasses
from typing import Any, Optional

import typer

from envcheck.errors import EnvcheckError
from envcheck.params import Param

HOSTS_PANEL = "Hosts and SSH"


class Refused(typer.BadParameter):
    """A value its declaration refuses; the message names the flag and the fix already."""


class _Parse:
    """The parser typer calls with each value (and the default): the declaration's own parse."""

    def __init__(self, param: Param) -> None:
        self.param = param
        self.__name__ = param.metavar or param.key   # click names the type after it

    def __call__(self, value: Any) -> Any:
        if value is None:
            return None
        try:
            return self.param.parse(value)
        except EnvcheckError as e:
            raise Refused(" ".join(e.one_line().split())) from None


def option(p: Param, *names: str, panel: Optional[str] = None, help: Optional[str] = None,
           **kw: Any) -> Any:
    """typer.Option for a declared input; `names` default to its flag, `help` to its own."""
    if names and names[0] != p.name:    # the declaration under another flag: messages say which
        p = dataclasses.replace(p, flag=names[0])
    return typer.Option(*(names or (p.name,)), parser=_Parse(p), metavar=p.metavar,
                        help=help or p.help, rich_help_panel=panel, **kw)


def argument(p: Param, help: Optional[str] = None, name: Optional[str] = None, **kw: Any) -> Any:
    """typer.Argument for a declared input; messages call it `name` (default: its flag)."""
    if name:
        p = dataclasses.replace(p, flag=name)
    return typer.Argument(parser=_Parse(p), metavar=p.metavar, help=help or p.help, **kw)


def declared(param: Any) -> Optional[Param]:
    """The declaration behind a parsed click/typer parameter (None: a flag, or undeclared):
    typer >= 0.29 keeps the parser in its ParameterInfo, older typer in a click FuncParamType."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    parser = getattr(info, "parser", None) or getattr(getattr(param, "type", None), "func", None)
    return parser.param if isinstance(parser, _Parse) else None
