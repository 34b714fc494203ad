"""The driver's JVM as PySpark sees it (`SparkContext._jvm`), remembering the classes and static
methods it has found.

Every `F.col`, `F.lit`, `F.when` … is three round trips to the JVM through py4j: two lookups
(the class `org.apache.spark.sql.functions`, then its method by name) and the call. py4j asks
the JVM again each time: lowering a pass-through made 2,261 round trips, 1,068 of them lookups
of the same few names (with this view: 1,197, 4 lookups). A class and a static method do not
change while the JVM runs, so the view keeps what it found: a lookup is then a dict read. A
static field's value, a package and anything not found are asked for each time, as before.
"""

from __future__ import annotations

from py4j.java_gateway import JavaClass, JavaMember, JVMView


class RememberingView(JVMView):
    """A JVMView whose classes, once found, are kept (as RememberingClass)."""

    def __init__(self, view: JVMView):  # the same JVM, client and imports as `view`
        self.__dict__.update(view.__dict__)
        self._classes: dict[str, RememberingClass] = {}

    def __getattr__(self, name):
        found = self._classes.get(name)
        if found is None:
            found = super().__getattr__(name)
            if isinstance(found, JavaClass):
                found = self._classes.setdefault(
                    name, RememberingClass(found._fqn, found._gateway_client))
        return found

    def static_class(self, name: str) -> RememberingClass | None:
        """The class of fully qualified `name` (a dotted path walked once, then kept), or None
        when this JVM has no such class."""
        found = self._classes.get(name)
        if found is None:
            found = _class_named(self, name)
            if found is not None:
                self._classes[name] = found
        return found


class RememberingClass(JavaClass):
    """A JavaClass whose static methods and nested classes, once found, are kept."""

    def __init__(self, fqn: str, gateway_client):
        super().__init__(fqn, gateway_client)
        self._members: dict[str, JavaMember | JavaClass] = {}

    def __getattr__(self, name):
        found = self._members.get(name)
        if found is None:
            found = super().__getattr__(name)
            if isinstance(found, JavaClass):
                found = RememberingClass(found._fqn, found._gateway_client)
            if isinstance(found, (JavaMember, JavaClass)):  # a field's value may change
                self._members[name] = found
        return found


def remember_lookups(context) -> None:
    """From now on PySpark's calls into the JVM of `context` (a SparkContext) look each class
    and static method up once. Idempotent."""
    view = type(context)._jvm
    if view is not None and not isinstance(view, RememberingView):
        type(context)._jvm = RememberingView(view)


def static_class(spark, name: str) -> JavaClass | None:
    """The class of fully qualified `name` in the driver's JVM of `spark` (a classic session),
    kept by the view when it remembers; None when the JVM has no such class or the session is
    a Spark Connect one (no JVM here)."""
    context = getattr(spark, "_sc", None)  # its view, not the session's `_jvm`: PySpark copies
    view = None if context is None else context._jvm  # that before remember_lookups replaces it
    if isinstance(view, RememberingView):
        return view.static_class(name)
    return None if view is None else _class_named(view, name)


def _class_named(view: JVMView, name: str) -> RememberingClass | None:
    found = view
    for part in name.split("."):
        found = getattr(found, part)
    return RememberingClass(found._fqn, found._gateway_client) \
        if isinstance(found, JavaClass) else None
