"""``pairbench.view`` re-exports exactly its public names (changed only by a deliberate edit)."""

import pairbench.view


def test_the_view_package_exports_exactly_its_api() -> None:
    assert pairbench.view.__all__ == ["DEFAULT_PORT", "create_app", "serve", "serving"]
    for name in pairbench.view.__all__:
        assert getattr(pairbench.view, name) is not None, name
