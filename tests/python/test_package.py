"""The installed package: its metadata pins the torch it was built against."""

import importlib.metadata

import torch
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import fxmlir


def test_requires_the_torch_it_was_built_against():
    release = Version(torch.__version__).public
    assert importlib.metadata.requires("fxmlir") == [f"torch=={release}"]


def test_this_torch_is_a_supported_one():
    assert Version(torch.__version__).public in SpecifierSet(fxmlir.SUPPORTED_TORCH)
    assert importlib.metadata.version("fxmlir") == fxmlir.__version__
