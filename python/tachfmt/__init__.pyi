# Types of the tachfmt extension module (python/*.c), the package's __init__: for editors
# and type checkers.
import os
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, ClassVar, Final, Literal, Protocol, Sequence, SupportsIndex, Union, overload

__version__: Final[str]

STATUS_HAS_GIL: Final[int]
STATUS_ON_CPU: Final[int]
STATUS_UNKNOWN: Final[int]
STATUS_GIL_REQUESTED: Final[int]
STATUS_HAS_EXCEPTION: Final[int]
STATUS_MAIN_THREAD: Final[int]
STATUS_BASELINE: Final[int]

class _ReadableBinary(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

class _WritableBinary(Protocol):
    def write(self, data: bytes, /) -> Any: ...

StrPath = Union[str, os.PathLike[str], os.PathLike[bytes]]
Source = Union[StrPath, bytes, bytearray, memoryview, _ReadableBinary]
Destination = Union[StrPath, _WritableBinary]
OptionValue = Union[str, int, float, bool]
Threads = Union[int, Iterable[int]]
States = Union[str, Iterable[str]]

class Error(ValueError):
    filename: str
    reason: str
    position: int | None
    position_kind: Literal["offset", "line", "record"] | None
    code: int

class Warning(UserWarning): ...

class Frame(tuple[str, str, int | None]):
    """A frame: (file, function, line); end_line, col, end_col and opcode are attributes."""
    _fields: ClassVar[tuple[str, str, str]]
    _field_defaults: ClassVar[dict[str, Any]]
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int]
    def __new__(cls, sequence: Sequence[Any], dict: dict[str, Any] = ...) -> Frame: ...
    @property
    def file(self) -> str: ...
    @property
    def function(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def end_line(self) -> int | None: ...
    @property
    def col(self) -> int | None: ...
    @property
    def end_col(self) -> int | None: ...
    @property
    def opcode(self) -> int | None: ...
    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Frame: ...
    def _asdict(self) -> dict[str, Any]: ...
    def _replace(self, **kwargs: Any) -> Frame: ...

class Sample(tuple[int, int, int, int, tuple[Frame, ...]]):
    """One sample (weight, time_ns and values are attributes, not tuple items)."""
    _fields: ClassVar[tuple[str, str, str, str, str]]
    _field_defaults: ClassVar[dict[str, Any]]
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int]
    def __new__(cls, sequence: Sequence[Any], dict: dict[str, Any] = ...) -> Sample: ...
    @property
    def tid(self) -> int: ...
    @property
    def interpreter(self) -> int: ...
    @property
    def timestamp_us(self) -> int: ...
    @property
    def status(self) -> int: ...
    @property
    def frames(self) -> tuple[Frame, ...]: ...
    @property
    def weight(self) -> int: ...
    @property
    def time_ns(self) -> int | None:
        """The time it stands for (ns); None when meta['sample_time'] is False."""
    @property
    def values(self) -> tuple[int, ...]:
        """One per meta['value_types']; () when the input has none."""
    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Sample: ...
    def _asdict(self) -> dict[str, Any]: ...
    def _replace(self, **kwargs: Any) -> Sample: ...

class Reader(Iterator[Sample]):
    @property
    def meta(self) -> dict[str, Any]: ...
    @property
    def format(self) -> str | None: ...
    def __iter__(self) -> Reader: ...
    def __next__(self) -> Sample: ...
    def __enter__(self) -> Reader: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> bool: ...
    def close(self) -> None: ...

# A frame as write() takes it: a Frame, (file, function, line) or all seven fields.
FrameLike = Union[Frame, tuple[str, str, int | None],
                  tuple[str, str, int | None, int | None, int | None, int | None, int | None]]
SampleLike = Union[Sample, tuple[int, int, int, int, Sequence[FrameLike]],
                   tuple[int, int, int, int, Sequence[FrameLike], int],
                   tuple[int, int, int, int, Sequence[FrameLike], int, int | None],
                   tuple[int, int, int, int, Sequence[FrameLike], int, int | None,
                         Sequence[int]]]

def open(src: Source, from_: str | None = None, *, thread: Threads | None = None,
         status: States | None = None, from_us: int | None = None, to_us: int | None = None,
         max_depth: int | None = None, **reader_options: OptionValue) -> Reader: ...

@overload
def convert(src: Source, dst: None = None, to: str = "pprof", from_: str | None = None,
            reader_options: dict[str, OptionValue] | None = None, *,
            thread: Threads | None = None, status: States | None = None,
            from_us: int | None = None, to_us: int | None = None,
            max_depth: int | None = None, **options: OptionValue) -> bytes: ...
@overload
def convert(src: Source, dst: Destination, to: str = "pprof", from_: str | None = None,
            reader_options: dict[str, OptionValue] | None = None, *,
            thread: Threads | None = None, status: States | None = None,
            from_us: int | None = None, to_us: int | None = None,
            max_depth: int | None = None, **options: OptionValue) -> None: ...

def stacks(src: Source, from_: str | None = None, *, thread: Threads | None = None,
           status: States | None = None, from_us: int | None = None, to_us: int | None = None,
           max_depth: int | None = None,
           **reader_options: OptionValue) -> dict[tuple[int, tuple[Frame, ...]], int]: ...

@overload
def write(dst: None, samples: Iterable[SampleLike], meta: dict[str, Any] | None = None,
          to: str = "tach", **options: OptionValue) -> bytes: ...
@overload
def write(dst: Destination, samples: Iterable[SampleLike], meta: dict[str, Any] | None = None,
          to: str = "tach", **options: OptionValue) -> None: ...

def formats() -> list[tuple[str, bool, bool]]: ...
