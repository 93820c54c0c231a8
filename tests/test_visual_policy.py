"""Scale prior and ORB gate (``remote.core.locate.visual_policy``) and how the locator applies them."""

from PIL import Image

from remote.core.locate import visual_policy
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from tests.support.images import icon as _icon


def test_scale_penalty_only_off_scale_on_a_same_size_screen():
    assert visual_policy.scale_penalty(1.2, (400, 800), (400, 800)) == visual_policy.OFF_SCALE_PENALTY
    assert visual_policy.scale_penalty(1.02, (400, 800), (400, 800)) == 0.0
    assert visual_policy.scale_penalty(1.2, None, (400, 800)) == 0.0
    assert visual_policy.scale_penalty(1.2, (300, 600), (400, 800)) == 0.0


def test_orb_gate():
    textured = {"edges": 0.1}
    assert visual_policy.orb_worth_trying(textured, None)          # ORB alone: always tried
    assert visual_policy.orb_worth_trying(textured, 0.6)            # a near miss before it
    assert not visual_policy.orb_worth_trying(textured, 0.2)        # nothing like it on the screen
    assert not visual_policy.orb_worth_trying({"edges": 0.01}, 0.9)  # too few edges for keypoints


def test_off_scale_sibling_needs_a_stronger_match_when_the_source_size_is_known():
    icon = _icon(3)
    big = icon.resize((72, 72), Image.Resampling.LANCZOS)   # the same drawing, 1.2x larger
    scr = Image.new("RGB", (400, 800), (250, 250, 250))
    scr.paste(big, (150, 300))
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    unknown = loc.locate_image(icon, scr)
    same_size = loc.locate_image(icon, scr, source_size=scr.size)
    other_size = loc.locate_image(icon, scr, source_size=(300, 600))
    assert unknown.success and other_size.success
    # Same size: the 1.2x sibling is either refused or accepted with less confidence;
    # another source size only reorders the search (its expected scale first).
    assert not same_size.success or same_size.element.confidence < unknown.element.confidence
    best = same_size.element or same_size.candidates[0]
    assert best.metadata["raw_score"] <= best.metadata["verified"] - visual_policy.OFF_SCALE_PENALTY + 1e-6


def test_learned_crops_carry_their_source_size(tmp_path):
    (tmp_path / "icons").mkdir()
    _icon(1).save(tmp_path / "icons" / "wechat.png")
    am = AssetsManager(tmp_path)
    am.add_learned("wechat", _icon(2), (1080, 2400))
    sizes = [s for _, s in am.variants_with_sources("wechat")]
    assert sizes == [None, (1080, 2400)]
    assert len(am.get_variants("wechat")) == 2


def test_reference_from_another_density_skips_the_same_scale_tier():
    icon = _icon(4)
    shown = icon.resize((45, 45), Image.Resampling.LANCZOS)   # cut on a 400-wide screen, shown on a 300-wide one
    scr = Image.new("RGB", (300, 600), (250, 250, 250))
    scr.paste(shown, (120, 200))
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    res = loc.locate_image(icon, scr, source_size=(400, 800))
    assert res.success and res.method_used == "multiscale" and "template" not in res.tiers_tried
    assert 120 <= res.element.center[0] < 165 and 200 <= res.element.center[1] < 245
    # Unknown or same-density source: the same-scale tier still runs first.
    assert loc.locate_image(icon, scr).tiers_tried[0] == "template"
    assert visual_policy.same_scale_possible((300, 600), (300, 600))
    assert not visual_policy.same_scale_possible((400, 800), (300, 600))


def test_known_source_size_narrows_the_scales_searched():
    icon = _icon(5)
    half = icon.resize((30, 30), Image.Resampling.LANCZOS)   # x0.5: no phone-to-phone density change
    scr = Image.new("RGB", (400, 800), (250, 250, 250))
    scr.paste(half, (200, 500))
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    assert loc.locate_image(icon, scr).success                            # origin unknown: 0.5-1.5
    assert not loc.locate_image(icon, scr, source_size=scr.size).success   # same size: 0.75-1.4 only
    assert loc.locate_image(icon, scr, source_size=(800, 1600)).success    # expected 0.5: found
    assert visual_policy.scale_range((800, 1600), (400, 800)) == (0.375, 0.7)
