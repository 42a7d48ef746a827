"""keras.io "Knowledge Distillation", with only the import changed (and a seed): a Model
subclass whose compile() takes extra arguments and calls super().compile(),
and whose compute_loss() override has Keras 3's signature without
``training`` (plus ``allow_empty``)."""
import numpy as np

import minikeras as keras
from minikeras import layers, ops


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
        teacher_pred = self.teacher(x, training=False)
        student_loss = self.student_loss_fn(y, y_pred)
        distillation_loss = self.distillation_loss_fn(
            ops.softmax(teacher_pred / self.temperature, axis=1),
            ops.softmax(y_pred / self.temperature, axis=1),
        ) * (self.temperature**2)
        return self.alpha * student_loss + (1 - self.alpha) * distillation_loss

    def call(self, x):
        return self.student(x)


# Seeded (keras.io's examples seed where they need repeatable numbers): unseeded,
# the 8-unit student sometimes stalls at 0.52 (seen once in CI).
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 8)).astype("float32")
y_train = (x_train[:, 0] + x_train[:, 1] > 0).astype("int64") + (x_train[:, 2] > 1).astype("int64")

teacher = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(64, activation="relu"), layers.Dense(3)],
                           name="teacher")
student = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(8, activation="relu"), layers.Dense(3)],
                           name="student")

teacher.compile(optimizer=keras.optimizers.Adam(0.01),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=[keras.metrics.SparseCategoricalAccuracy()])
teacher.fit(x_train, y_train, epochs=10, verbose=0)
teacher_accuracy = teacher.evaluate(x_train, y_train, verbose=0)[1]
assert teacher_accuracy > 0.9, teacher_accuracy

distiller = Distiller(student=student, teacher=teacher)
distiller.compile(
    optimizer=keras.optimizers.Adam(0.01),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
    student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn=keras.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)
history = distiller.fit(x_train, y_train, epochs=10, verbose=0)
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
result = distiller.evaluate(x_train, y_train, verbose=0, return_dict=True)
assert result["sparse_categorical_accuracy"] > 0.6, result  # Keras 3.15 reaches 0.75 here
print("OK")
