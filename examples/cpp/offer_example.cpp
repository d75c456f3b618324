// A game client in C++ on the offer SDK's C ABI (sdk/include/offer_sdk.h): the same game as
// examples/c, written the C++ way: a `Game` object receives the seven callbacks through
// captureless lambdas (which convert to the C function pointers) with itself as `user_data`.
// It asks for an offer at the player's first loss, buys it (a `purchase`, plus a
// `currency_earned` with source `purchase` for each currency pack), waits for the inventory and
// balance updates it brings, and hides its store when the kill switch turns offers off. Callbacks run
// inside SVC_Poll, called once a frame from the main loop.
//
// A game whose studio signs its players' tokens (player identity `required`) gives the SDK the
// player's token at init and a new one whenever the SDK asks (OnPlayerTokenNeeded, registered
// here by its name with SVC_RegisterCallback, before the token expires or when the engine
// refused it). Here the studio's backend is a file: set OFFER_PLAYER_TOKEN_FILE to it, and the
// game reads the token there (its `sub` is the player id: `player_id_source: jwt`).
//
// Usage: offer_example_cpp BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID
// Exits 0 once the kill switch has turned offers off, 1 when init fails, 2 when nothing
// happens for two minutes, 3 when no offer comes.

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "offer_sdk.h"

namespace {

// This game's currency packs: item id to (currency, amount). A game knows its own store.
const std::map<std::string, std::pair<std::string, long>> kPacks = {
    {"gems_500", {"gems", 500}},
};

// The string value of `"key":"..."` in the SDK's compact JSON, or "" (a real game uses the
// JSON library it already has).
std::string json_string(const std::string& json, const std::string& key) {
    std::smatch match;
    const std::regex pattern("\"" + key + "\":\"([^\"]*)\"");
    return std::regex_search(json, match, pattern) ? match[1].str() : std::string();
}

// The integer value of `"key":N`, or `fallback`.
long json_int(const std::string& json, const std::string& key, long fallback) {
    std::smatch match;
    const std::regex pattern("\"" + key + "\":(-?[0-9]+)");
    return std::regex_search(json, match, pattern) ? std::stol(match[1].str()) : fallback;
}

// Asks the studio's backend for the player's token: this example's backend is the file that
// OFFER_PLAYER_TOKEN_FILE names. Empty for a game without signed player identity.
std::string backend_token() {
    const char* path = std::getenv("OFFER_PLAYER_TOKEN_FILE");
    if (path == nullptr) {
        return std::string();
    }
    std::string token;
    std::getline(std::ifstream(path), token);
    return token;
}

class Game {
public:
    // Registers the seven callbacks, each forwarding to a member of this game.
    void register_callbacks() {
        report("OnSDKReady", SVC_SetOnSDKReady(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_ready(json); }, this));
        report("OnOfferReceived", SVC_SetOnOfferReceived(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_offer(json); }, this));
        report("OnBalanceUpdate", SVC_SetOnBalanceUpdate(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_balance(json); },
            this));
        report("OnInventoryUpdate", SVC_SetOnInventoryUpdate(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_inventory(json); },
            this));
        report("OnNoOffer", SVC_SetOnNoOffer(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_no_offer(json); },
            this));
        report("OnKillSwitchChanged", SVC_SetOnKillSwitchChanged(
            [](const char* json, void* self) { static_cast<Game*>(self)->on_kill_switch(json); },
            this));
        report("OnConfigUpdated", SVC_SetOnConfigUpdated(
            [](const char* json, void*) { std::cout << "config " << json << std::endl; }, this));
        // The same registration, by the callback's name (as engine wrappers bind them).
        report("OnPlayerTokenNeeded", SVC_RegisterCallback(SVC_Dart_OnPlayerTokenNeeded,
            [](const char* json, void*) {
                std::cout << "player token needed " << json << std::endl;
                const std::string token = backend_token();
                if (!token.empty()) {
                    std::cout << "set player token " << SVC_SetPlayerToken(token.c_str())
                              << std::endl;
                }
            },
            this));
    }

    bool done() const { return done_; }
    int exit_code() const { return exit_code_; }

private:
    static void report(const char* name, SVC_Result result) {
        std::cout << "registered " << name << " " << result << std::endl;
    }

    void on_ready(const std::string& json) {
        std::cout << "ready " << json << std::endl;
        SVC_RequestOffer("first_loss");  // the player just lost for the first time
    }

    void on_offer(const std::string& json) {
        std::cout << "offer " << json << std::endl;
        if (bought_) {
            return;
        }
        const std::string offer_id = json_string(json, "offer_id");
        const std::size_t items_at = json.find("\"items\":");
        const std::string items = items_at == std::string::npos ? "" : json.substr(items_at);
        std::string item_ids;
        const std::regex item_pattern("\"item_id\":\"([^\"]*)\"");
        for (std::sregex_iterator it(items.begin(), items.end(), item_pattern), end; it != end;
             ++it) {
            const std::string item_id = (*it)[1].str();
            item_ids += (item_ids.empty() ? "\"" : ",\"") + item_id + "\"";
            const auto pack = kPacks.find(item_id);
            if (pack != kPacks.end()) {
                const std::string earned =
                    "{\"type\":\"currency_earned\",\"currency_id\":\"" + pack->second.first +
                    "\",\"amount\":" + std::to_string(pack->second.second) +
                    ",\"source\":\"purchase\",\"tx_id\":\"pack-" + item_id + "-" + offer_id +
                    "\"}";
                // The engine pushes the new balance to the player's sockets: OnBalanceUpdate.
                std::cout << "track currency_earned " << SVC_Track(earned.c_str()) << std::endl;
                waiting_balance_ = true;
            } else {
                waiting_inventory_ = true;
            }
        }
        const std::string purchase = "{\"type\":\"purchase\",\"offer_id\":\"" + offer_id +
                                     "\",\"item_ids\":[" + item_ids + "],\"price_cents\":" +
                                     std::to_string(json_int(json, "price_cents", 0)) +
                                     ",\"tx_id\":\"buy-" + offer_id + "\"}";
        std::cout << "track purchase " << SVC_Track(purchase.c_str()) << std::endl;
        bought_ = true;
        std::cout << "bought " << offer_id << std::endl;
        check_settled();
    }

    void on_no_offer(const std::string& json) {
        std::cout << "no offer " << json << std::endl;
        if (!bought_) {
            done_ = true;
            exit_code_ = 3;
        }
    }

    void on_balance(const std::string& json) {
        std::cout << "balance " << json << std::endl;
        if (bought_) {
            waiting_balance_ = false;
            check_settled();
        }
    }

    void on_inventory(const std::string& json) {
        std::cout << "inventory " << json << std::endl;
        if (bought_) {
            waiting_inventory_ = false;
            check_settled();
        }
    }

    void on_kill_switch(const std::string& json) {
        std::cout << "kill switch " << json << std::endl;
        if (json_int(json, "level", 0) >= 2) {
            std::cout << "offers are off: store hidden" << std::endl;
            done_ = true;
            exit_code_ = 0;
        }
    }

    void check_settled() {
        if (bought_ && !settled_ && !waiting_inventory_ && !waiting_balance_) {
            settled_ = true;
            std::cout << "purchase settled" << std::endl;
        }
    }

    bool bought_ = false;
    bool waiting_inventory_ = false;
    bool waiting_balance_ = false;
    bool settled_ = false;
    bool done_ = false;
    int exit_code_ = 2;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::cerr << "usage: " << argv[0] << " BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID\n";
        return 1;
    }
    const std::vector<std::string> args(argv + 1, argv + argc);
    Game game;
    game.register_callbacks();

    // The game's svc_config.json, shipped with the build; written here so the example runs
    // from any folder.
    const std::string token = backend_token();
    std::ofstream(args[3] + "/svc_config.json")
        << R"({"auto_login": true, "player_id_source": ")" << (token.empty() ? "custom" : "jwt")
        << R"("})";

    // One JSON object: the SDK configuration, the SDK's folder and the game's player id, or its
    // signed token. (The arguments are plain ids and paths, a token base64url; a real game
    // builds it with its JSON library.)
    const std::string player = token.empty() ? "\"player_id\":\"" + args[4] + "\""
                                             : "\"player_token\":\"" + token + "\"";
    const std::string config = "{\"api_key\":\"" + args[2] + "\",\"game_id\":\"" + args[1] +
                               "\",\"environment\":\"production\",\"base_url\":\"" + args[0] +
                               "\",\"data_dir\":\"" + args[3] + "\"," + player + "}";
    const SVC_Result init = SVC_Init(config.c_str());
    std::cout << "init " << init << std::endl;
    if (init != SVC_OK) {
        return 1;
    }

    // The frame loop: callbacks run here, on the game's thread.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!game.done() && std::chrono::steady_clock::now() < deadline) {
        SVC_Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(16));
    }
    std::cout << "shutdown " << SVC_Shutdown() << std::endl;
    return game.exit_code();
}
