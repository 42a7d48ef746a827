"""CSVLogger: the file holds a header and one row per epoch, flushed as it goes."""
import csv

import pytest

from minikeras.callbacks import CSVLogger, LambdaCallback


def read_rows(path, separator=","):
    with open(path, newline="") as handle:
        return list(csv.reader(handle, delimiter=separator))


def test_rows_match_history(data, make_model, tmp_path):
    x, y = data
    path = tmp_path / "log.csv"
    history = make_model().fit(x, y, batch_size=16, epochs=3, verbose=0, validation_data=(x[:16], y[:16]),
                               callbacks=[CSVLogger(path)])
    rows = read_rows(path)
    assert rows[0] == ["epoch", "loss", "mae", "val_loss", "val_mae"]
    assert len(rows) == 4
    for epoch, row in enumerate(rows[1:]):
        assert int(row[0]) == epoch
        for key, cell in zip(rows[0][1:], row[1:]):
            assert float(cell) == history.history[key][epoch]  # written with full precision


def test_without_validation_val_columns_are_na(data, make_model, tmp_path):
    x, y = data
    path = tmp_path / "log.csv"
    make_model(metrics=()).fit(x, y, epochs=2, verbose=0, callbacks=[CSVLogger(path)])
    rows = read_rows(path)
    assert rows[0] == ["epoch", "loss", "val_loss"]
    assert [row[2] for row in rows[1:]] == ["NA", "NA"]


def test_separator_and_append(data, make_model, tmp_path):
    x, y = data
    path = tmp_path / "log.csv"
    model = make_model(metrics=())
    model.fit(x, y, epochs=2, verbose=0, callbacks=[CSVLogger(path, separator=";")])
    model.fit(x, y, epochs=1, verbose=0, callbacks=[CSVLogger(path, separator=";", append=True)])
    rows = read_rows(path, ";")
    assert rows[0] == ["epoch", "loss", "val_loss"]
    assert [row[0] for row in rows[1:]] == ["0", "1", "0"]  # one header only
    model.fit(x, y, epochs=1, verbose=0, callbacks=[CSVLogger(path, separator=";")])
    assert len(read_rows(path, ";")) == 2  # append=False starts a new file


def test_rows_are_flushed_during_training(data, make_model, tmp_path):
    x, y = data
    path = tmp_path / "log.csv"
    lines_seen = []
    spy = LambdaCallback(on_epoch_end=lambda epoch, logs: lines_seen.append(len(read_rows(path))))
    make_model().fit(x, y, epochs=3, verbose=0, callbacks=[CSVLogger(path), spy])
    assert lines_seen == [2, 3, 4]


def test_file_is_closed_at_the_end(data, make_model, tmp_path):
    x, y = data
    logger = CSVLogger(tmp_path / "log.csv")
    make_model().fit(x, y, epochs=1, verbose=0, callbacks=[logger])
    assert logger.csv_file.closed


def test_missing_folder_is_an_error(data, make_model, tmp_path):
    x, y = data
    with pytest.raises(FileNotFoundError):
        make_model().fit(x, y, epochs=1, verbose=0, callbacks=[CSVLogger(tmp_path / "no" / "log.csv")])
