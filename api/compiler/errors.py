"""The one error type the compiler raises."""


class VerifyError(ValueError):
    """A snapshot that cannot be compiled; each problem names its object path.

    ``problems`` is a list of ``(path, message)``, e.g.
    ``("virtual-services/web/default_pool", "pool 'x' does not exist")``.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" for path, message in self.problems))
