#!/usr/bin/env python3
"""Generates the JSON test records deterministically from a seed (Python 3 standard library only).

Writes json-records.ndjson (2,452 records, one compact JSON document per line) and json-large-records.ndjson
(consecutive records joined into JSON arrays of about 55 KB), the records of the same names in this folder (the
default seed writes them byte for byte). Every value is made up here from word lists and a random.Random(seed);
the shapes, sizes and compressibility were tuned to the real-world records these files replaced (README.md).
The kinds, counts and order:

    100 Twitter API statuses, 30 GitHub API events, 793 product records (a header row, then arrays),
    875 Jenkins job records, 654 Jenkins update-center plugin records

Same seed, same bytes on any machine: only random.Random(seed) draws (no hash(), no set iteration, no time, no
locale), dicts are built in a fixed key order, json.dumps(ensure_ascii=True) so output is ASCII.

    python3 generate.py [--seed N] [--out DIR]            # writes DIR/json-records.ndjson, DIR/json-large-records.ndjson
    python3 generate.py --compare DIR_A DIR_B             # table of sizes and gzip-6/zstd-3/lz4 ratios of both
"""
import argparse
import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import random

DEFAULT_SEED = 390
RECORDS = "json-records.ndjson"
LARGE = "json-large-records.ndjson"
LARGE_MIN = 55050       # a large record is closed at the first record that takes the array to this many bytes or more
COUNTS = (("twitter", 100), ("github", 30), ("amazon", 793), ("jobs", 875), ("plugins", 654))

# ----------------------------------------------------------------------------------------------------------------
# Word lists (all invented for this file or common words)

JA = ("今日", "明日", "昨日", "本当に", "ありがとう", "よろしく", "お願いします", "楽しい", "嬉しい", "眠い", "疲れた",
      "ゲーム", "動画", "アニメ", "音楽", "ライブ", "写真", "友達", "学校", "部活", "野球", "サッカー", "先生", "仕事",
      "週末", "夏休み", "最高", "大好き", "好きな", "人", "気持ち", "感じ", "見て", "行って", "来た", "思う", "ます",
      "です", "した", "けど", "から", "まで", "だけ", "って", "ね", "よ", "な", "の", "に", "を", "は", "が", "と",
      "も", "で", "、", "。", "！", "？", "…", "笑", "www", "フォロー", "リツイート", "拡散", "希望", "募集", "中",
      "東京", "大阪", "関西", "北海道", "名前", "印象", "一言", "思い出", "趣味", "誕生日", "おめでとう", "天気", "雨",
      "晴れ", "ラーメン", "カフェ", "ケーキ", "映画", "漫画", "新曲", "公開", "発売", "決定", "情報", "無言",
      "相互", "お気軽に", "どうぞ", "❤", "✨", "😊", "😂", "🎉", "★", "♪", "（", "）", "・", "「", "」", "\n")
ZH = ("今天", "我们", "一起", "喜欢", "朋友", "分享", "新闻", "视频", "图片", "的", "了", "是", "在", "，", "。")
EN = ("the", "a", "an", "and", "or", "of", "to", "in", "for", "with", "on", "at", "from", "by", "this", "that",
      "is", "are", "was", "be", "it", "as", "not", "all", "new", "add", "fix", "update", "remove", "support", "build",
      "job", "plugin", "test", "tests", "report", "reports", "file", "files", "user", "users", "server", "client",
      "option", "config", "configuration", "version", "release", "project", "projects", "source", "code", "page",
      "results", "status", "allows", "provides", "integration", "jenkins", "builds", "notification", "parameter",
      "parameters", "publish", "deploy", "repository", "branch", "commit", "changes", "log", "output", "error",
      "errors", "warning", "when", "after", "before", "into", "using", "use", "can", "you", "your", "which", "each",
      "display", "run", "runs", "step", "steps", "tool", "tools", "view", "list", "data", "simple", "based", "set",
      "time", "support", "also", "such", "some", "other", "more", "remote", "node", "nodes", "slave", "master")
CAMEL = ("Build", "Test", "Report", "Plugin", "Parameter", "Notifier", "Trigger", "Publisher", "Wrapper", "Sorter",
         "Chain", "Column", "Pack", "Lamp", "Scanner", "Deploy", "Remote", "Matrix", "Cloud", "Tracker", "Log",
         "Status", "Job", "Node", "Git", "Maven", "Ant", "Script", "View", "Config")
SYL = ("ka", "ri", "to", "mo", "na", "yu", "ki", "sa", "shi", "ta", "ne", "ko", "mi", "ra", "ha", "ru", "ai",
       "ro", "no", "ma", "te", "su", "chi", "ya", "ho", "ke", "me", "ni", "ku", "so")
FIRST = ("Alex", "Maria", "John", "Anna", "Peter", "Laura", "David", "Nina", "Tom", "Julia", "Mark", "Sara", "Paul",
         "Eva", "Chris", "Lena", "Mike", "Olga", "Dan", "Rita", "Ivan", "Kate", "Leo", "Mia", "Sam", "Zoe")
LAST = ("Smith", "Meyer", "Novak", "Rossi", "Berg", "Costa", "Walker", "Kowalski", "Jansen", "Silva", "Dubois",
        "Fischer", "Lopez", "Tanaka", "Kim", "Nilsen", "Horvat", "Moreau", "Weber", "Young", "Baker", "Price")
TECH = ("core", "api", "web", "util", "commons", "server", "client", "parent", "maven", "plugin", "tools",
        "site", "docs", "sandbox", "examples", "integration", "tests", "runtime", "engine", "bridge", "connector")
PROJ = ("Aurora", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Garnet", "Harbor", "Indigo", "Juniper",
        "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pylon", "Quartz", "Raven", "Sable", "Tundra", "Umber",
        "Vertex", "Willow", "Xenon", "Yarrow", "Zephyr", "Atlas", "Borealis", "Cinder", "Dune", "Echo", "Flint",
        "Grove", "Helix", "Iris", "Jade", "Koi", "Lotus", "Mosaic", "Nova", "Orbit", "Prism", "Quill", "Ridge")
BRANDS = (("Samsung", 397), ("Apple", 101), ("Motorola", 100), ("Nokia", 49), ("HUAWEI", 36), ("Google", 33),
          ("Sony", 29), ("Xiaomi", 27), ("ASUS", 13), ("OnePlus", 7))
PHONE = ("Galaxy", "Phone", "Smartphone", "Unlocked", "GSM", "CDMA", "4G", "LTE", "Dual", "SIM", "Black", "White",
         "Blue", "Silver", "Gold", "Red", "Green", "Gray", "16GB", "32GB", "64GB", "128GB", "256GB", "(Renewed)",
         "Verizon", "AT&T", "T-Mobile", "Sprint", "Cricket", "Prepaid", "International", "Version", "Cell",
         "Camera", "Screen", "Display", "Slide", "Flip", "Touch", "Edition", "Plus", "Pro", "Max", "Mini", "Lite",
         "with", "-", "/", "Factory", "US", "Warranty", "Carrier", "Octa-Core", "Android", "Battery", "Mobile")
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SOURCES = (("http://twitter.com/download/iphone", "Twitter for iPhone"),
           ("http://twitter.com/download/android", "Twitter for Android"),
           ("http://example-bot.net/", "example-bot.net"), ("http://example-client.jp/", "exampleclient"),
           ("http://twitter.com", "Twitter Web Client"), ("http://feeds.example.com", "examplefeed"))
COLORS = (("blue", 481), ("red", 184), ("disabled", 110), ("yellow", 44), ("aborted", 38), ("red_anime", 7),
          ("grey", 5), ("blue_anime", 3), ("aborted_anime", 2), ("yellow_anime", 1))
LABELS = ("misc", "buildwrapper", "report", "ui", "scm", "notifier", "trigger", "upload", "parameter", "cli",
          "maven", "post-build", "external", "slaves", "page-decorator", "listview-column", "builder", "cluster")


def weighted(r, pairs):
    x = r.randrange(sum(w for _, w in pairs))
    for v, w in pairs:
        if x < w:
            return v
        x -= w
    raise AssertionError


def rand_str(r, alphabet, n):
    return "".join(r.choice(alphabet) for _ in range(n))


def words(r, pool, n, sep=" "):
    return sep.join(r.choice(pool) for _ in range(n))


def login(r):
    s = "".join(r.choice(SYL) for _ in range(r.randint(2, 4)))
    if r.random() < 0.4:
        s += str(r.randint(0, 9999))
    if r.random() < 0.2:
        s = s.capitalize()
    return s


def full_name(r):
    return r.choice(FIRST) + " " + r.choice(LAST)


def tw_date(r, t):
    """Twitter's created_at from seconds since 2014-01-01 (a Wednesday), a plain calendar with 30-day months."""
    day, sec = divmod(t, 86400)
    return "%s %s %02d %02d:%02d:%02d +0000 %d" % (DAYS[(day + 2) % 7], MONTHS[(day // 30) % 12], day % 30 + 1,
                                                    sec // 3600, sec // 60 % 60, sec % 60, 2014 - day // 360 % 6)


def iso(r, year0=2011, years=3):
    return "%04d-%02d-%02dT%02d:%02d:%02d" % (r.randint(year0, year0 + years - 1), r.randint(1, 12),
                                              r.randint(1, 28), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59))


# ----------------------------------------------------------------------------------------------------------------
# Twitter API statuses

def ja_text(r, lo, hi, lang):
    pool = JA if lang == "ja" else ZH
    out = ""
    n = r.randint(lo, hi)
    while len(out) < n:
        out += r.choice(pool)
    return out


def tw_user(r):
    uid = r.randint(10 ** 7, 3 * 10 ** 9)
    sn = login(r)
    has_url = r.random() < 0.4
    url = "http://t.co/" + rand_str(r, B62, 10) if has_url else None
    ents = {}
    if has_url:
        ents["url"] = {"urls": [{"url": url, "expanded_url": "http://example.jp/" + sn, "display_url": "example.jp/" + sn,
                                 "indices": [0, 22]}]}
    ents["description"] = {"urls": []}
    tokyo = r.random() < 0.4
    bg = r.random() < 0.7
    img = "%d/%s_normal.jpeg" % (r.randint(10 ** 17, 6 * 10 ** 17), rand_str(r, B62, 8))
    bgc = "C0DEED" if bg else rand_str(r, "0123456789ABCDEF", 6)
    u = {"id": uid, "id_str": str(uid), "name": ja_text(r, 2, 10, "ja") if r.random() < 0.7 else login(r),
         "screen_name": sn, "location": ja_text(r, 0, 8, "ja") if r.random() < 0.6 else "",
         "description": ja_text(r, 10, 100, "ja"), "url": url, "entities": ents, "protected": False,
         "followers_count": r.randint(0, 5000), "friends_count": r.randint(0, 3000), "listed_count": r.randint(0, 60),
         "created_at": tw_date(r, r.randrange(6 * 360 * 86400)), "favourites_count": r.randint(0, 9000),
         "utc_offset": 32400 if tokyo else None, "time_zone": ("Tokyo" if r.random() < 0.5 else "Osaka") if tokyo else None,
         "geo_enabled": r.random() < 0.3, "verified": False, "statuses_count": r.randint(10, 40000), "lang": "ja",
         "contributors_enabled": False, "is_translator": False, "is_translation_enabled": False,
         "profile_background_color": bgc,
         "profile_background_image_url": "http://abs.twimg.com/images/themes/theme1/bg.png" if bg else
         "http://pbs.twimg.com/profile_background_images/%d/%s.jpeg" % (r.randint(10 ** 8, 10 ** 9), rand_str(r, HEX, 32)),
         "profile_background_image_url_https": None,
         "profile_background_tile": not bg and r.random() < 0.5,
         "profile_image_url": "http://pbs.twimg.com/profile_images/" + img,
         "profile_image_url_https": "https://pbs.twimg.com/profile_images/" + img,
         "profile_banner_url": "https://pbs.twimg.com/profile_banners/%d/%d" % (uid, r.randint(1300000000, 1410000000)),
         "profile_link_color": "0084B4" if bg else rand_str(r, "0123456789ABCDEF", 6),
         "profile_sidebar_border_color": "C0DEED" if bg else "FFFFFF", "profile_sidebar_fill_color": "DDEEF6",
         "profile_text_color": "333333", "profile_use_background_image": True, "default_profile": bg,
         "default_profile_image": False, "following": False, "follow_request_sent": False, "notifications": False}
    u["profile_background_image_url_https"] = u["profile_background_image_url"].replace("http:", "https:", 1)
    if r.random() < 0.15:
        del u["profile_banner_url"]
    return u


def tw_media(r, sn, sid, start):
    mid = sid - r.randint(1, 10 ** 6)
    code = rand_str(r, B62, 10)
    name = rand_str(r, B62 + "-_", 15)
    w, h = r.choice(((765, 432), (1024, 768), (640, 640), (600, 800)))
    sizes = {"medium": {"w": 600, "h": 600 * h // w, "resize": "fit"},
             "small": {"w": 340, "h": 340 * h // w, "resize": "fit"},
             "thumb": {"w": 150, "h": 150, "resize": "crop"}, "large": {"w": w, "h": h, "resize": "fit"}}
    return {"id": mid, "id_str": str(mid), "indices": [start, start + 22],
            "media_url": "http://pbs.twimg.com/media/%s.jpg" % name,
            "media_url_https": "https://pbs.twimg.com/media/%s.jpg" % name, "url": "http://t.co/" + code,
            "display_url": "pic.twitter.com/" + code,
            "expanded_url": "http://twitter.com/%s/status/%d/photo/1" % (sn, sid), "type": "photo", "sizes": sizes}


def tw_status(r, sid, t, lang, mention=None, media=0.1):
    user = tw_user(r)
    text = ja_text(r, 10, 110, lang)
    ents = {"hashtags": [], "symbols": [], "urls": [], "user_mentions": []}
    if mention:
        text = "@%s %s" % (mention["screen_name"], text)
        ents["user_mentions"].append({"screen_name": mention["screen_name"], "name": mention["name"],
                                      "id": mention["id"], "id_str": mention["id_str"],
                                      "indices": [0, len(mention["screen_name"]) + 1]})
    if r.random() < 0.25:
        tag = ja_text(r, 2, 6, lang)
        ents["hashtags"].append({"text": tag, "indices": [len(text) + 1, len(text) + 2 + len(tag)]})
        text += " #" + tag
    if r.random() < 0.2:
        code = rand_str(r, B62, 10)
        ents["urls"].append({"url": "http://t.co/" + code, "expanded_url": "http://example.jp/%s/%d" % (
            login(r), r.randint(1000, 99999)), "display_url": "example.jp/\u2026", "indices": [len(text) + 1, len(text) + 23]})
        text += " http://t.co/" + code
    if r.random() < media:
        m = tw_media(r, user["screen_name"], sid, len(text) + 1)
        ents["media"] = [m]
        text += " " + m["url"]
    src = r.choice(SOURCES)
    s = {"metadata": {"result_type": "recent", "iso_language_code": lang}, "created_at": tw_date(r, t),
         "id": sid, "id_str": str(sid), "text": text,
         "source": '<a href="%s" rel="nofollow">%s</a>' % src, "truncated": False,
         "in_reply_to_status_id": None, "in_reply_to_status_id_str": None,
         "in_reply_to_user_id": mention["id"] if mention else None,
         "in_reply_to_user_id_str": mention["id_str"] if mention else None,
         "in_reply_to_screen_name": mention["screen_name"] if mention else None, "user": user, "geo": None,
         "coordinates": None, "place": None, "contributors": None, "retweet_count": r.randint(0, 200) if r.random() < 0.5 else 0,
         "favorite_count": r.randint(0, 100) if r.random() < 0.4 else 0, "entities": ents, "favorited": False,
         "retweeted": False, "lang": lang}
    if "media" in ents or ents["urls"]:
        s["possibly_sensitive"] = False
        s["lang"] = s.pop("lang")
    return s


def twitter(r, n):
    out, popular = [], []
    sid = 505874924095815681
    t = 242 * 86400 + 1755
    for _ in range(n):
        sid -= r.randint(10 ** 5, 5 * 10 ** 9)
        t -= r.randint(0, 2)
        lang = "ja" if r.random() < 0.96 else "zh"
        if r.random() < 0.73:                                   # a retweet carries the status it retweets
            if popular and r.random() < 0.45:                    # popular statuses are retweeted again, in bursts
                inner = r.choice(popular[-3:])
            else:
                inner = tw_status(r, sid - r.randint(10 ** 13, 10 ** 15), t - r.randint(60, 86400), lang, media=0.5)
                popular.append(inner)
            st = tw_status(r, sid, t, lang)
            ou = inner["user"]
            st["text"] = "RT @%s: %s" % (ou["screen_name"], inner["text"])
            st["retweeted_status"] = inner
            rs = st.pop("retweeted_status")
            tail = {k: st.pop(k) for k in ("retweet_count", "favorite_count", "entities", "favorited", "retweeted",
                                           "lang")}
            st.pop("possibly_sensitive", None)
            st["retweeted_status"] = rs
            st.update(tail)
            st["retweet_count"] = inner["retweet_count"]
            st["entities"] = {"hashtags": [], "symbols": [], "urls": [], "user_mentions": [
                {"screen_name": ou["screen_name"], "name": ou["name"], "id": ou["id"], "id_str": ou["id_str"],
                 "indices": [3, 4 + len(ou["screen_name"])]}]}
            if "media" in inner["entities"]:
                m = dict(inner["entities"]["media"][0])
                m["source_status_id"] = inner["id"]
                m["source_status_id_str"] = inner["id_str"]
                st["entities"]["media"] = [m]
                st["possibly_sensitive"] = False
                st["lang"] = st.pop("lang")
        else:
            mention = tw_user(r) if r.random() < 0.3 else None
            st = tw_status(r, sid, t, lang, mention)
        out.append(st)
    return out


# ----------------------------------------------------------------------------------------------------------------
# GitHub API events (the type of each of the 30 events, in order)

GH_TYPES = ("PushEvent", "CreateEvent", "ForkEvent", "WatchEvent", "PushEvent", "PushEvent", "WatchEvent",
            "WatchEvent", "WatchEvent", "PushEvent", "IssueCommentEvent", "IssuesEvent", "PushEvent", "PushEvent",
            "PushEvent", "PushEvent", "PushEvent", "WatchEvent", "PushEvent", "GollumEvent", "WatchEvent",
            "CreateEvent", "CreateEvent", "IssueCommentEvent", "ForkEvent", "PushEvent", "PushEvent", "PushEvent",
            "GollumEvent", "ForkEvent")
API = "https://api.example.com"
WEB = "https://code.example.com"
AVATAR = "https://avatars.example.com/avatar/%s?d=https://static.example.net/assets%%2Fimages%%2Fgravatars%%2Fgravatar-user-420.png"


def gh_user(r, name, uid, grav):
    u = API + "/users/" + name
    return {"url": u, "gists_url": u + "/gists{/gist_id}", "gravatar_id": grav, "type": "User",
            "avatar_url": AVATAR % grav, "subscriptions_url": u + "/subscriptions",
            "received_events_url": u + "/received_events", "organizations_url": u + "/orgs", "repos_url": u + "/repos",
            "login": name, "id": uid, "starred_url": u + "/starred{/owner}{/repo}", "events_url": u + "/events{/privacy}",
            "followers_url": u + "/followers", "following_url": u + "/following"}


def sentence(r, lo, hi):
    s = words(r, EN, r.randint(lo, hi))
    return s[:1].upper() + s[1:]


def gh_issue(r, repo, who, when):
    num = r.randint(1, 900)
    u = "%s/repos/%s/issues/%d" % (API, repo, num)
    body = "\r\n".join(sentence(r, 4, 16) + "." for _ in range(r.randint(0, 14)))
    return {"user": gh_user(r, *who), "url": u, "labels": [], "html_url": "%s/%s/issues/%d" % (WEB, repo, num),
            "labels_url": u + "/labels{/name}", "pull_request": {"html_url": None, "patch_url": None, "diff_url": None},
            "created_at": when, "closed_at": None, "milestone": None, "title": sentence(r, 3, 8), "body": body,
            "updated_at": when, "assignee": None, "number": num, "comments": r.randint(0, 12),
            "events_url": u + "/events", "comments_url": u + "/comments", "state": "open", "id": r.randint(10 ** 6, 10 ** 7)}


def github(r, n):
    out = []
    eid = 1652857722
    sec = 30
    for typ in GH_TYPES[:n]:
        name, uid, grav = login(r), r.randint(1000, 3 * 10 ** 6), rand_str(r, HEX, 32)
        who = (name, uid, grav)
        owner = name if typ in ("PushEvent", "CreateEvent", "GollumEvent") else login(r)
        repo = owner + "/" + r.choice(PROJ).lower() + r.choice(("", "-" + r.choice(TECH), ".rb", ".js", ""))
        when = "2013-01-10T07:58:%02d" % sec + "Z"
        ev = {"type": typ, "created_at": when,
              "actor": {"gravatar_id": grav, "login": name, "avatar_url": AVATAR % grav, "url": API + "/users/" + name,
                        "id": uid},
              "repo": {"url": API + "/repos/" + repo, "id": r.randint(10 ** 5, 8 * 10 ** 6), "name": repo},
              "public": True}
        if typ == "PushEvent":
            commits = []
            for _ in range(r.choice((1, 1, 1, 2, 3))):
                sha = rand_str(r, HEX, 40)
                commits.append({"url": "%s/repos/%s/commits/%s" % (API, repo, sha), "message": sentence(r, 3, 25),
                                "distinct": True, "sha": sha, "author": {"email": name + "@example.com", "name": name}})
            ev["payload"] = {"commits": commits, "distinct_size": len(commits),
                             "ref": "refs/heads/" + r.choice(("master", "develop", "gh-pages", "issue-%d" % r.randint(1, 99))),
                             "push_id": r.randint(10 ** 8, 2 * 10 ** 8), "head": commits[-1]["sha"],
                             "before": rand_str(r, HEX, 40), "size": len(commits)}
        elif typ == "CreateEvent":
            ev["payload"] = {"description": sentence(r, 2, 8), "master_branch": "master", "ref": "master",
                             "ref_type": "branch"}
        elif typ == "WatchEvent":
            ev["payload"] = {"action": "started"}
        elif typ == "GollumEvent":
            pages = []
            for _ in range(r.choice((1, 1, 2))):
                pg = r.choice(PROJ)
                pages.append({"page_name": pg, "html_url": "%s/%s/wiki/%s" % (WEB, repo, pg), "title": pg,
                              "sha": rand_str(r, HEX, 40), "summary": None, "action": "edited"})
            ev["payload"] = {"pages": pages}
        elif typ == "ForkEvent":
            full = name + "/" + repo.split("/")[1]
            u = API + "/repos/" + full
            forkee = {"description": sentence(r, 5, 18), "fork": True, "url": u, "language": r.choice(("Ruby", "JavaScript", "Python", "C")),
                      "stargazers_url": u + "/stargazers", "clone_url": "%s/%s.git" % (WEB, full),
                      "tags_url": u + "/tags{/tag}", "full_name": full, "merges_url": u + "/merges", "forks": 0,
                      "private": False, "git_refs_url": u + "/git/refs{/sha}", "archive_url": u + "/{archive_format}{/ref}",
                      "collaborators_url": u + "/collaborators{/collaborator}", "owner": gh_user(r, *who),
                      "languages_url": u + "/languages", "trees_url": u + "/git/trees{/sha}",
                      "labels_url": u + "/labels{/name}", "html_url": WEB + "/" + full, "pushed_at": when,
                      "created_at": when, "has_issues": False, "forks_url": u + "/forks", "branches_url": u + "/branches{/branch}",
                      "commits_url": u + "/commits{/sha}", "notifications_url": u + "/notifications{?since,all,participating}",
                      "open_issues": 0, "contents_url": u + "/contents/{+path}", "blobs_url": u + "/git/blobs{/sha}",
                      "issues_url": u + "/issues{/number}", "compare_url": u + "/compare/{base}...{head}",
                      "issue_events_url": u + "/issues/events{/number}", "name": full.split("/")[1],
                      "updated_at": when, "statuses_url": u + "/statuses/{sha}", "forks_count": 0,
                      "assignees_url": u + "/assignees{/user}", "ssh_url": "git@code.example.com:%s.git" % full,
                      "public": True, "has_wiki": True, "subscribers_url": u + "/subscribers",
                      "mirror_url": None, "watchers_count": 0, "id": r.randint(10 ** 6, 10 ** 7),
                      "has_downloads": True, "git_commits_url": u + "/git/commits{/sha}", "downloads_url": u + "/downloads",
                      "pulls_url": u + "/pulls{/number}", "homepage": None, "issue_comment_url": u + "/issues/comments/{number}",
                      "hooks_url": u + "/hooks", "subscription_url": u + "/subscription", "milestones_url": u + "/milestones{/number}",
                      "svn_url": WEB + "/" + full, "events_url": u + "/events", "git_tags_url": u + "/git/tags{/sha}",
                      "teams_url": u + "/teams", "comments_url": u + "/comments{/number}", "open_issues_count": 0,
                      "keys_url": u + "/keys{/key_id}", "git_url": "git://code.example.com/%s.git" % full,
                      "contributors_url": u + "/contributors", "size": r.randint(100, 5000), "watchers": 0}
            ev["payload"] = {"forkee": forkee}
        else:
            reporter = (login(r), r.randint(1000, 3 * 10 ** 6), rand_str(r, HEX, 32))
            issue = gh_issue(r, repo, reporter, when)
            if typ == "IssuesEvent":
                issue["assignee"] = gh_user(r, *reporter)
                ev["payload"] = {"issue": issue, "action": "opened"}
            else:
                cid = r.randint(10 ** 7, 2 * 10 ** 7)
                ev["payload"] = {"issue": issue, "comment": {
                    "user": gh_user(r, *who), "url": "%s/repos/%s/issues/comments/%d" % (API, repo, cid),
                    "created_at": when, "body": "\r\n".join(sentence(r, 4, 16) + "." for _ in range(r.randint(1, 6))),
                    "updated_at": when, "id": cid}, "action": "created"}
        eid -= r.randint(1, 8)
        ev["id"] = str(eid)
        out.append(ev)
        sec = max(0, sec - r.randint(0, 1))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Product records: a CSV header row, then one array per product, sorted by product id

def amazon(r, n):
    rows = []
    models = [(b, b + " " + r.choice(PHONE) + " " + rand_str(r, "ABCDEFGHJKMNPSTVXZ", 1) + str(r.randint(1, 999)))
              for b in (weighted(r, BRANDS) for _ in range(120))]
    for _ in range(n - 1):
        brand, model = r.choice(models)
        asin = "B0" + rand_str(r, ALNUM, 8)
        title = model + " " + words(r, PHONE, r.randint(1, r.choice((8, 12, 12, 20))))
        slug = "-".join(w for w in title.replace("(", "").replace(")", "").replace("/", " ").split() if w != "-")
        slug = "-".join(slug.split("-")[:6])
        rating = round(r.uniform(1.0, 5.0), 1)
        if r.random() < 0.19:
            rating = int(rating)
        price = "" if r.random() < 0.27 else "$%d.%02d" % (r.randint(19, 1299), r.choice((99, 95, 0, 49, r.randint(0, 99))))
        rows.append([asin, brand, title, "https://www.example-shop.com/%s/dp/%s" % (slug, asin),
                     "https://img.example-shop.com/images/I/%s._AC_UY218_SEARCH213888_FMwebp_QL75_.jpg" % rand_str(r, B62 + "+-", 11),
                     rating, "https://www.example-shop.com/product-reviews/" + asin, r.randint(1, 3000), price])
    rows.sort(key=lambda row: row[0])
    return [["asin", "brand", "title", "url", "image", "rating", "reviewUrl", "totalReviews", "prices"]] + rows


# ----------------------------------------------------------------------------------------------------------------
# Jenkins job records, sorted by name ignoring case

def jobs(r, n):
    names = []
    while len(names) < n:
        base = r.choice(PROJ)
        if r.random() < 0.3:
            base = base.lower()
        parts = [base]
        for _ in range(r.choice((1, 1, 1, 2, 3))):
            parts.append(r.choice(TECH + ("trunk", "trunk", "1.x", "2.x", "jdk1.6", "jdk1.7", "deploy", "nightly",
                                           "ubuntu", "windows", "fulltest", "%d.%d" % (r.randint(0, 4), r.randint(0, 9)))))
        sep = r.choice(("-", "-", "-", ".", "_"))
        name = sep.join(parts)
        if name not in names:
            names.append(name)
    names.sort(key=lambda s: (s.lower(), s))
    return [{"name": nm, "url": "https://builds.example.org/job/%s/" % nm, "color": weighted(r, COLORS)} for nm in names]


# ----------------------------------------------------------------------------------------------------------------
# Jenkins update-center plugin records, sorted by name

def version(r):
    return r.choice(("%d.%d" % (r.randint(0, 2), r.randint(0, 30)), "%d.%d.%d" % (r.randint(0, 2), r.randint(0, 9), r.randint(0, 20))))


def plugins(r, n):
    names = []
    while len(names) < n:
        if r.random() < 0.08:
            nm = "".join(r.choice(CAMEL) for _ in range(r.randint(1, 3)))
        else:
            nm = "-".join(r.choice(EN[20:] + TECH) for _ in range(r.randint(1, 3)))
            if r.random() < 0.2:
                nm += "-plugin"
        if nm not in names:
            names.append(nm)
    names.sort()
    out = []
    for nm in names:
        ver = version(r)
        title = " ".join(w.capitalize() for w in nm.replace("-plugin", "").split("-")) + " Plugin"
        p = {"buildDate": "%s %02d, %d" % (r.choice(MONTHS), r.randint(1, 28), r.randint(2010, 2013))}
        deps = []
        for _ in range(weighted(r, ((0, 463), (1, 102), (2, 43), (3, 20), (4, 16), (5, 3), (6, 2), (11, 2)))):
            deps.append({"name": r.choice(names), "optional": r.random() < 0.4, "version": version(r)})
        p["dependencies"] = deps
        devs = []
        for _ in range(weighted(r, ((1, 515), (2, 101), (3, 18), (4, 9), (5, 4)))):
            fn = full_name(r)
            d = {"developerId": fn.split()[0][0].lower() + fn.split()[1].lower()}
            if r.random() < 0.4:
                d["email"] = d["developerId"] + "@example.org"
            d["name"] = fn
            devs.append(d)
        p["developers"] = devs
        p["excerpt"] = "" if r.random() < 0.05 else "This plugin " + sentence(r, 6, 40).lower() + "."
        group = "org.jenkins-ci.plugins" if r.random() < 0.7 else "org.jvnet.hudson.plugins"
        p["gav"] = "%s:%s:%s" % (group, nm, ver)
        if r.random() < 628 / 654:
            p["labels"] = [r.choice(LABELS) for _ in range(weighted(r, ((1, 407), (2, 133), (0, 84), (3, 23), (4, 7))))]
        p["name"] = nm
        rel = iso(r)
        if r.random() < 512 / 654:
            p["previousTimestamp"] = iso(r) + ".00Z"
            p["previousVersion"] = version(r)
        p["releaseTimestamp"] = rel + ".00Z"
        p["requiredCore"] = "1.%d" % r.randint(300, 480)
        p["scm"] = r.choice(("code.example.com", "code.example.com", "svn.example.org"))
        p["sha1"] = base64.b64encode(bytes(r.randrange(256) for _ in range(20))).decode()
        p["title"] = title
        p["url"] = "http://updates.example.org/download/plugins/%s/%s/%s.hpi" % (nm, ver, nm)
        p["version"] = ver
        if r.random() < 628 / 654:
            p["wiki"] = "https://wiki.example.org/display/JENKINS/" + title.replace(" ", "+")
        out.append(p)
    return out


# ----------------------------------------------------------------------------------------------------------------

def dumps(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True)


def generate(seed=DEFAULT_SEED):
    """Returns (records, large records), each a list of str without newlines."""
    kinds = {"twitter": twitter, "github": github, "amazon": amazon, "jobs": jobs, "plugins": plugins}
    lines = []
    for i, (kind, count) in enumerate(COUNTS):
        r = random.Random("%s/%d/%s" % (seed, i, kind))        # str seeds are hashed with SHA-512, not hash()
        docs = kinds[kind](r, count)
        assert len(docs) == count, (kind, len(docs))
        lines.extend(dumps(d) for d in docs)
    large, cur = [], []
    for line in lines:
        cur.append(line)
        if sum(map(len, cur)) + len(cur) + 1 >= LARGE_MIN:
            large.append("[" + ",".join(cur) + "]")
            cur = []
    if cur:
        large.append("[" + ",".join(cur) + "]")
    return lines, large


def write(out, seed=DEFAULT_SEED):
    lines, large = generate(seed)
    os.makedirs(out, exist_ok=True)
    for name, recs in ((RECORDS, lines), (LARGE, large)):
        with open(os.path.join(out, name), "wb") as f:
            f.write("".join(x + "\n" for x in recs).encode("ascii"))


# ----------------------------------------------------------------------------------------------------------------
# Comparison: sizes and compression ratios (raw bytes / compressed bytes) of a folder's two files

BATCH = 16384


def read_records(path):
    with open(path, "rb") as f:
        return [x for x in f.read().split(b"\n") if x]


def batches(recs):
    """Consecutive records, newline-terminated, cut into batches of at most 16 KiB of whole records."""
    out, cur = [], b""
    for x in recs:
        x += b"\n"
        if cur and len(cur) + len(x) > BATCH:
            out.append(cur)
            cur = b""
        cur += x
    if cur:
        out.append(cur)
    return out


def codecs():
    cs = [("gzip-6", None)]
    for tool, args in (("zstd", ["-3", "-q", "-f"]), ("lz4", ["-1", "-q", "-f", "-m"])):
        if shutil.which(tool):
            cs.append(("%s" % ("zstd-3" if tool == "zstd" else "lz4"), [tool] + args))
    return cs


def ratio(blobs, cmd):
    raw = sum(map(len, blobs))
    if cmd is None:
        return raw / sum(len(gzip.compress(b, 6, mtime=0)) for b in blobs)
    ext = ".zst" if cmd[0] == "zstd" else ".lz4"
    with tempfile.TemporaryDirectory() as d:
        names = []
        for i, b in enumerate(blobs):
            names.append("%05d" % i)
            with open(os.path.join(d, names[-1]), "wb") as f:
                f.write(b)
        subprocess.run(cmd + names, cwd=d, check=True)
        return raw / sum(os.path.getsize(os.path.join(d, n + ext)) for n in names)


def properties(folder):
    """An ordered list of (property, value) for the folder's two files."""
    recs = read_records(os.path.join(folder, RECORDS))
    large = read_records(os.path.join(folder, LARGE))
    sizes = sorted(map(len, recs))
    n = len(sizes)
    props = [("records", n), ("mean size", sum(sizes) / n)]
    for p in (10, 50, 90, 99):
        props.append(("p%d size" % p, sizes[min(n - 1, p * n // 100)]))
    for name, cmd in codecs():
        props.append(("%s per record" % name, ratio(recs, cmd)))
        props.append(("%s 16 KiB batches" % name, ratio(batches(recs), cmd)))
    props.append(("large records", len(large)))
    props.append(("large mean size", sum(map(len, large)) / len(large)))
    for name, cmd in codecs():
        props.append(("%s large per record" % name, ratio(large, cmd)))
    return props


def bands(prop):
    """The allowed relative difference of a property of DIR_B from DIR_A's value (--compare)."""
    if prop == "records":
        return 0.0
    if prop == "mean size" or prop == "large mean size":
        return 0.03
    if prop.startswith("p") and prop.endswith(" size"):
        return 0.10
    if prop == "large records":
        return 0.15
    return 0.05


def compare(a, b):
    pa, pb = properties(a), properties(b)
    rows = []
    print("%-28s %12s %12s %8s %7s" % ("property", os.path.basename(os.path.abspath(a)) or a,
                                       os.path.basename(os.path.abspath(b)) or b, "diff", "within"))
    for (k, va), (_, vb) in zip(pa, pb):
        diff = (vb - va) / va
        ok = abs(diff) <= bands(k) + 1e-12
        rows.append((k, va, vb, diff, ok))
        fmt = "%12d" if isinstance(va, int) else "%12.3f"
        print(("%-28s " + fmt + " " + fmt + " %+7.1f%% %7s") % (k, va, vb, 100 * diff, "yes" if ok else "NO"))
    if len(codecs()) == 1:
        print("(no zstd/lz4 command on this machine: gzip only)")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", help="the folder to write the two files to (required unless --compare)")
    ap.add_argument("--compare", nargs=2, metavar=("DIR_A", "DIR_B"),
                    help="print the sizes and compression ratios of the files in two folders instead")
    args = ap.parse_args(argv)
    if args.compare:
        rows = compare(*args.compare)
        return 0 if all(r[-1] for r in rows) else 1
    if not args.out:
        ap.error("--out DIR is required (the committed files in this folder are not overwritten by default)")
    write(args.out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
