"""The frame table of a robot: every link as a frame, its array in each reference, by name or index."""
import numpy as np

from ..algorithms.frames import REFERENCES, frame_array


class FrameTable:
    """Every URDF link of a model as a frame: its frames.FRAME_SIZE array in each reference, looked up by name or
    index: rows[frame][reference], the table the C Calls of the frame rows look up too, made at the first use."""

    def __init__(self, model):
        self.model, self.rows = model, None

    def array(self, frame, reference):
        """The array of `frame` (a name of robot.frame_names or its index) in `reference`; a ValueError naming the
        close matches of an unknown name."""
        try:
            return self.build()[frame][reference]
        except (KeyError, TypeError):
            pass
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}, got {reference!r}")
        names = list(self.model.frames)
        if isinstance(frame, str):
            import difflib
            close = difflib.get_close_matches(frame, names, n=5, cutoff=0.6)
            raise ValueError(f"unknown frame {frame!r}: " + (f"did you mean {', '.join(map(repr, close))}?" if close
                             else f"robot.frame_names lists the {len(names)} frames"))
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
            if -len(names) <= frame < 0:
                return self.rows[int(frame) + len(names)][reference]
            raise ValueError(f"frame index {frame} is out of range for {len(names)} frames")
        raise ValueError(f"frame must be a frame name (robot.frame_names) or its index, got {type(frame).__name__}")

    def build(self):
        """{name or index: {reference: its array}}."""
        if self.rows is None:
            self.rows = {}
            for i, (name, f) in enumerate(self.model.frames.items()):
                self.rows[name] = self.rows[i] = {ref: frame_array(f.body, ref, f.R, f.p) for ref in REFERENCES}
        return self.rows
