import configparser

config = configparser.ConfigParser()
config.read("config.ini")
port = config.getint("server", "prot")
print(f"listening on {port}")
