"""What an HDF5 file may point to: only its own objects.

HDF5 can make a file read data it does not hold: an *external link* names
an object in another HDF5 file on disk (opened and read as though it were
in this one), a *virtual dataset* maps its values from datasets of other
files, *external storage* keeps a dataset's raw bytes in any other file
(``/etc/passwd`` read as uint8), and a *user-defined link* may do anything
a plugin does. A weights or model file carrying one of them would pull
another file's contents into the model (and so into what it predicts, or
what a later ``save`` writes). Keras's and minikeras's files use none of
them, so every reader of an HDF5 file calls :func:`check_contained` on it
first and refuses such a file with the library's FileLoadError; a soft
link (a path inside the same file) is accepted when it resolves to an
object of the file.

The walk reads metadata only (links and dataset headers), never a value.
"""
import contextlib

import h5py

from minikeras._support.load_budget import FileLoadError


def _refuse(source, path, what):
    raise FileLoadError(
        f"{source}: '{path}' is {what}, which would make loading read data from outside the file. A model or "
        "weights file must hold its own data (Keras and minikeras never write such links): refusing it.")


def _check_links(group, source, soft_links):
    """Refuse the links of ``group`` that are not hard or soft links; collect the soft ones."""
    for key in group.keys():
        link = group.get(key, getlink=True)
        path = f"{group.name.rstrip('/')}/{key}"
        if isinstance(link, h5py.ExternalLink):
            _refuse(source, path, f"an external link to '{link.path}' in the file '{link.filename}'")
        if isinstance(link, h5py.SoftLink):
            soft_links.append((group, path, link.path))
        elif not isinstance(link, h5py.HardLink):
            _refuse(source, path, f"a link of an unknown kind ({type(link).__name__})")


def _check_dataset(dataset, source):
    if dataset.is_virtual:
        _refuse(source, dataset.name, "a virtual dataset (its values are mapped from other files)")
    if dataset.id.get_create_plist().get_external_count():
        _refuse(source, dataset.name, "a dataset whose bytes are stored in external files")


def check_contained(handle, source):
    """Refuse an HDF5 file whose objects reach outside it.

    Args:
        handle: an open h5py File or Group (its whole file is checked).
        source: the file, for messages.

    Raises:
        FileLoadError: an external or user-defined link, a soft link that
            does not resolve to an object of the file, a virtual dataset, or
            a dataset with external storage, naming its path.
    """
    root = handle.file
    groups, datasets, soft_links = [root], [], []

    def collect(_, item):  # visititems follows hard links only, each object once
        (groups if isinstance(item, h5py.Group) else datasets).append(item)

    root.visititems(collect)
    for group in groups:
        _check_links(group, source, soft_links)
    # No external link is left anywhere in the file, so resolving a soft link cannot open another file.
    for group, path, target in soft_links:
        if group.get(target) is None:
            _refuse(source, path, f"a soft link to '{target}', which is no object of the file")
    for dataset in datasets:
        _check_dataset(dataset, source)


@contextlib.contextmanager
def open_contained(data, source):
    """``h5py.File(data, "r")`` (a path or a file-like object), checked by :func:`check_contained`."""
    with h5py.File(data, "r") as handle:
        check_contained(handle, source)
        yield handle
