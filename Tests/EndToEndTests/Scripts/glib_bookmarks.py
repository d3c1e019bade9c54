# Reads an XBEL file with GLib's own GBookmarkFile (through ctypes: no bindings needed) and prints
# each URI, its MIME type and the applications registered for it, as GTK's recent files see them.
import ctypes, sys
glib = ctypes.CDLL("libglib-2.0.so.0")
glib.g_bookmark_file_new.restype = ctypes.c_void_p
glib.g_bookmark_file_load_from_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
glib.g_bookmark_file_get_uris.restype = ctypes.POINTER(ctypes.c_char_p)
glib.g_bookmark_file_get_uris.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
glib.g_bookmark_file_get_applications.restype = ctypes.POINTER(ctypes.c_char_p)
glib.g_bookmark_file_get_applications.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
glib.g_bookmark_file_get_mime_type.restype = ctypes.c_char_p
glib.g_bookmark_file_get_mime_type.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
bf = glib.g_bookmark_file_new()
if not glib.g_bookmark_file_load_from_file(bf, sys.argv[1].encode(), None):
    sys.exit("GLib could not load it")
n = ctypes.c_size_t()
uris = glib.g_bookmark_file_get_uris(bf, ctypes.byref(n))
for i in range(n.value):
    m = ctypes.c_size_t()
    apps = glib.g_bookmark_file_get_applications(bf, uris[i], ctypes.byref(m), None)
    print(uris[i].decode(), glib.g_bookmark_file_get_mime_type(bf, uris[i], None), sorted(apps[j].decode() for j in range(m.value)))
