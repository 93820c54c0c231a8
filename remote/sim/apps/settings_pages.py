"""What Settings shows on each ROM: the pages, their rows, where each switch sits, the search index.

Texts are the ROMs' zh-CN strings (AOSP ``values-zh-rCN``: 网络和互联网, 已关联的设备,
WLAN, 蓝牙, 飞行模式, 向上导航, 搜索设置; MIUI: 搜索设置项, 我的设备, 声音与振动).
Where the switches sit differs, as on real phones:

* ``aosp`` (Android 8-10 dashboard): the home page lists categories; WLAN and 飞行模式
  are switch rows on 网络和互联网, 蓝牙 on 已关联的设备.
* ``miui``: WLAN and 蓝牙 are rows on the home page that open their own page, whose
  first row (WLAN / 蓝牙 again) holds the switch; 飞行模式 is a switch on the home page.

Both home pages are longer than a phone's screen (AOSP's 关于手机 and MIUI's 更多设置 are below the
fold); a vertical swipe scrolls a page's list (``settings.scroll``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from remote.sim.apps.host import Phone


@dataclass(frozen=True)
class Row:
    """A preference row: a link to ``target``, a switch bound to ``phone.settings[key]``, or plain info."""

    title: str
    summary: str | Callable[[Phone], str] = ""
    target: str | None = None
    key: str | None = None
    icon: bool = False

    def summary_for(self, phone: Phone) -> str:
        return self.summary(phone) if callable(self.summary) else self.summary


def _wlan(phone: Phone) -> str:
    return "SimNet" if phone.settings["wlan"] else "已关闭"


def _on_off(key: str) -> Callable[[Phone], str]:
    return lambda phone: "已开启" if phone.settings.get(key) else "已关闭"


def _volume(phone: Phone) -> str:
    return f"{phone.volume}/15"


AOSP: dict[str, tuple[str, list[Row]]] = {
    "main": ("", [
        Row("网络和互联网", "WLAN、移动网络、流量使用和热点", "network", icon=True),
        Row("已关联的设备", "蓝牙、NFC", "connected", icon=True),
        Row("应用和通知", "权限、默认应用", icon=True),
        Row("电池", "100%", icon=True),
        Row("显示", "壁纸、休眠、字体大小", "display", icon=True),
        Row("声音", "音量、振动、勿扰模式", "sound", icon=True),
        Row("存储", "已使用 37% - 还剩 162 GB", icon=True),
        Row("隐私权", "权限、帐号活动、个人数据", icon=True),
        Row("位置信息", "已开启 - 1 个应用有权访问位置信息", icon=True),
        Row("安全", "屏幕锁定", icon=True),
        Row("帐号", "没有添加任何帐号", icon=True),
        Row("无障碍", "屏幕阅读器、显示、互动控件", icon=True),
        Row("系统", "语言、手势、时间、备份", icon=True),
        Row("关于手机", "SimPhone", "about", icon=True),   # below the fold: the list scrolls to it
    ]),
    "network": ("网络和互联网", [
        Row("WLAN", _wlan, key="wlan"), Row("移动网络", "中国移动"), Row("流量使用", "已使用 1.2 GB 的数据"),
        Row("热点和网络共享", "已关闭"), Row("飞行模式", key="airplane"),
    ]),
    "connected": ("已关联的设备", [
        Row("蓝牙", _on_off("bluetooth"), key="bluetooth"), Row("NFC", "允许手机在接触其他设备时交换数据", key="nfc"),
        Row("USB", "没有连接到任何设备"), Row("打印", "已开启 1 项打印服务"),
    ]),
}
MIUI: dict[str, tuple[str, list[Row]]] = {
    "main": ("设置", [
        Row("我的设备", "MIUI 12", "about"), Row("飞行模式", key="airplane"), Row("WLAN", _wlan, "wlan"),
        Row("蓝牙", _on_off("bluetooth"), "bluetooth"), Row("移动网络"), Row("便携式热点"), Row("连接与共享"),
        Row("锁屏"), Row("显示", target="display"), Row("声音与振动", target="sound"), Row("通知与控制中心"),
        Row("桌面"), Row("壁纸"), Row("个性主题"), Row("密码与安全"), Row("隐私保护"), Row("电池与性能"),
        Row("应用设置"), Row("更多设置"),
    ]),
    "wlan": ("WLAN", [Row("WLAN", key="wlan"), Row("WLAN 助理", "网络异常时自动切换")]),
    "bluetooth": ("蓝牙", [Row("蓝牙", key="bluetooth"), Row("设备名称", "SimPhone")]),
}
COMMON: dict[str, tuple[str, list[Row]]] = {
    "display": ("显示", [Row("亮度", "自适应"), Row("深色主题", _on_off("dark_theme"), key="dark_theme"),
                       Row("字体大小", "默认")]),
    "sound": ("声音", [Row("媒体音量", _volume), Row("铃声音量", "10/15"), Row("勿扰模式", "关闭")]),
    "about": ("关于手机", [Row("设备名称", "SimPhone"), Row("型号", "SimPhone"), Row("Android 版本", "13")]),
}
# Search index: title -> the page that holds it (a result opens that page).
INDEX = {
    "aosp": {"WLAN": "network", "飞行模式": "network", "移动网络": "network", "蓝牙": "connected", "NFC": "connected",
             "显示": "display", "深色主题": "display", "声音": "sound", "关于手机": "about", "网络和互联网": "network"},
    "miui": {"WLAN": "wlan", "蓝牙": "bluetooth", "飞行模式": "main", "显示": "display", "深色主题": "display",
             "声音与振动": "sound",
             "声音": "sound", "关于手机": "about", "我的设备": "about"},
}
SEARCH_HINT = {"aosp": "搜索设置", "miui": "搜索设置项"}


def page(rom: str, screen: str) -> tuple[str, list[Row]]:
    """(title, rows) of a page; unknown screens show the home page."""
    table = AOSP if rom == "aosp" else MIUI
    if rom == "miui" and screen == "sound":
        return "声音与振动", COMMON["sound"][1]
    if rom == "miui" and screen == "about":
        return "我的设备", COMMON["about"][1]
    return table.get(screen) or COMMON.get(screen) or table["main"]


def search(rom: str, query: str) -> list[tuple[str, str]]:
    """(title, page) of the index entries whose title contains ``query`` (case and spaces ignored)."""
    needle = "".join(query.split()).lower()
    if not needle:
        return []
    return [(title, target) for title, target in INDEX[rom].items() if needle in "".join(title.split()).lower()]


def breadcrumb(rom: str, target: str) -> str:
    if target == "main":
        return "设置"
    title = page(rom, target)[0]
    return f"设置 > {title}" if rom == "miui" else title
