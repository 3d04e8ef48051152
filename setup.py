"""The compiled part of numloom: the array handle's element access (numloom/core/_speedups.c)
and the traced operation and a sync's walk of the DAG (numloom/core/_tracing.c), built by ``pip install`` with the system C compiler. It is optional: where it cannot be built,
numloom runs the same paths in Python (as it does under ``NUMLOOM_PURE_PYTHON=1``)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "numloom.core._speedups",
            ["numloom/core/_speedups.c", "numloom/core/_tracing.c"],
            depends=["numloom/core/_speedups.h"],
            optional=True,
        )
    ]
)
